package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"unicode/utf8"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/humantime"
)

// The agent page's conversation (docs/web.md, "The conversation"): the
// turns of one conversation of the agent, read from its harness's own
// record through GET /agents/{name}/conversation, chat-style beside the
// pane's screen.
//
//	GET /web/agents/{name}/conversation   the conversation alone
//	    ?conversation=ID  an earlier conversation (after a reset)
//	    ?all=1            every turn, not only the newest
//
// static/leo.js fetches the partial again when one of the agent's turn,
// delivery or attention events arrives: the server renders the turns,
// the script never builds them.

// conversationTurns is how many of the newest turns the page shows unless
// asked for all.
const conversationTurns = 50

// foldInput is how long a tool's input may be and still show unfolded.
const foldInput = 160

type conversationData struct {
	Agent string
	Conv  api.Conversation
	// ID is the conversation asked for ("" the current one); All says
	// every turn was asked for.
	ID  string
	All bool
	// More says older turns were left out (only the newest
	// conversationTurns are shown).
	More bool
	Err  string
}

// conversationQuery reads ?conversation= and ?all= of a page or partial.
func conversationQuery(r *http.Request) (id string, all bool) {
	q := r.URL.Query()
	return q.Get("conversation"), q.Get("all") == "1"
}

// conversation reads what the page shows: the newest conversationTurns
// turns (one more is asked for, to know whether there are older ones),
// or all of them.
func (s *Server) conversation(ctx context.Context, name, id string, all bool) conversationData {
	d := conversationData{Agent: name, ID: id, All: all}
	q := api.ConversationQuery{ID: id}
	if !all {
		q.Last = conversationTurns + 1
	}
	c, err := s.client.Conversation(ctx, name, q)
	if err != nil {
		d.Err = errText(err)
		return d
	}
	if !all && len(c.Turns) > conversationTurns {
		c.Turns = c.Turns[len(c.Turns)-conversationTurns:]
		d.More = true
	}
	d.Conv = c
	return d
}

func (s *Server) conversationPartial(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	id, all := conversationQuery(r)
	s.partial(w, "conversation", s.conversation(r.Context(), name, id, all))
}

// conversationURL is the agent page (or, partial, its conversation alone)
// showing conversation id ("" the current one), all of its turns or the
// newest.
func conversationURL(name, id string, all, partial bool) string {
	u := agentURL(name)
	if partial {
		u += "/conversation"
	}
	v := url.Values{}
	if id != "" {
		v.Set("conversation", id)
	}
	if all {
		v.Set("all", "1")
	}
	if len(v) > 0 {
		u += "?" + v.Encode()
	}
	return u
}

// senderWords is who sent a turn's message, as a person reads it.
func senderWords(sender string) string {
	switch sender {
	case "":
		return "typed in the TUI"
	case api.SenderCLI:
		return "cli"
	case api.SenderWeb:
		return "web"
	case api.SenderAPI:
		return "api"
	}
	return sender // "task <t>", "agent <a>"
}

// folded says whether a tool's input starts folded: a long one does.
func folded(input string) bool {
	return utf8.RuneCountInString(input) > foldInput
}

// clipRunes is text's first n characters, with "…" when cut.
func clipRunes(text string, n int) string {
	if utf8.RuneCountInString(text) <= n {
		return text
	}
	r := []rune(text)
	return string(r[:n]) + "…"
}

// tokens is a token count, short: 950, 12.3k, 4.1M.
func tokens(n int64) string {
	switch {
	case n < 1000:
		return strconv.FormatInt(n, 10)
	case n < 1_000_000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprintf("%.1fM", float64(n)/1e6)
}

// usageShort is a day's usage compactly, for the agents list.
func usageShort(u *api.Usage) string {
	if u == nil {
		return ""
	}
	return tokens(u.InputTokens) + " in / " + tokens(u.OutputTokens) + " out"
}

func init() {
	funcs["conversationURL"] = conversationURL
	funcs["senderWords"] = senderWords
	funcs["folded"] = folded
	funcs["clip"] = clipRunes
	funcs["usageShort"] = usageShort
	funcs["turnTook"] = func(t api.Turn) string {
		if t.EndedAt == nil {
			return ""
		}
		return humantime.Took(t.StartedAt, *t.EndedAt)
	}
	funcs["usageOnly"] = func(u *api.Usage) string { return usageText(u, nil) }
	// lastRunning: the newest turn runs (static/leo.js settles such a
	// part once its agent is idle).
	funcs["lastRunning"] = func(ts []api.Turn) bool {
		return len(ts) > 0 && ts[len(ts)-1].Outcome == api.OutcomeTurnRunning
	}
}
