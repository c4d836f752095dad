package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/delivery"
	"github.com/blackpaw-studio/leo/internal/harness"
)

// Conversations (docs/agents.md, "Conversations"): what an agent said,
// read from its harness's own record (harness.ConversationReader), with
// leo's sent log (sent.go) naming who sent each message leo delivered.
// A send that waits (--wait, --reply) follows its message through the
// queue, its delivery and the turn it started, and answers with that
// turn's reply — never an earlier turn's: the turn is the one whose user
// text is the message, recorded when leo delivered it.

// Conversation returns the turns of one of agent name's conversations,
// oldest first.
func (m *Manager) Conversation(ctx context.Context, name string, q api.ConversationQuery) (api.Conversation, error) {
	a, err := m.lookup(name)
	if err != nil {
		return api.Conversation{}, err
	}
	a.mu.Lock()
	current, earlier := a.rec.SessionID, slices.Clone(a.rec.Earlier)
	a.mu.Unlock()
	id := current
	if q.ID != "" && q.ID != current {
		if !slices.Contains(earlier, q.ID) {
			return api.Conversation{}, api.Errorf(api.CodeNotFound, "agent %s has no conversation %q (its current one is %q; earlier: %s)",
				name, q.ID, current, orNone(earlier))
		}
		id = q.ID
	}
	out := api.Conversation{Agent: name, ConversationID: id, Turns: []api.Turn{}, Earlier: earlier}
	turns, sent, err := a.readConversation(ctx, id)
	if err != nil {
		return api.Conversation{}, err
	}
	settleRunning(turns, id == current, a.launchedAt())
	owners := matchSent(turns, sent, id)
	if q.Last > 0 && len(turns) > q.Last {
		turns, owners = turns[len(turns)-q.Last:], owners[len(owners)-q.Last:]
	}
	for i, t := range turns {
		at := apiTurn(t)
		if j := owners[i]; j >= 0 {
			at.User.Sender, at.User.MessageID = sent[j].Sender, sent[j].ID
		}
		out.Turns = append(out.Turns, at)
	}
	return out, nil
}

func orNone(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ", ")
}

// readConversation reads conversation id of a from its harness's record,
// and a's sent log. No id (no conversation yet) is no turns.
func (a *agent) readConversation(ctx context.Context, id string) ([]harness.Turn, []sentRecord, error) {
	name := a.name()
	h, rec, env, ok := a.recordLookup()
	if !ok {
		_, hn := a.harness()
		return nil, nil, api.Errorf(api.CodeConfigError, "agent %s: its conversation cannot be read: harness %q is not registered or its template no longer resolves", name, hn)
	}
	r, ok := h.(harness.ConversationReader)
	if !ok {
		return nil, nil, api.Errorf(api.CodeUnsupported, "agent %s: harness %s keeps no conversation record leo can read", name, h.Name())
	}
	if id == "" {
		return nil, nil, nil
	}
	turns, err := r.Conversation(ctx, harness.SessionQuery{Workspace: rec.Workspace, Env: env}, id)
	if err != nil {
		return nil, nil, api.Errorf(api.CodeInternal, "agent %s: reading conversation %s: %w", name, id, err)
	}
	sent, err := a.m.readSent(name)
	if err != nil {
		a.m.log.Warn("sent log not read: turns show no sender", "agent", name, "err", err)
	}
	return turns, sent, nil
}

// How a sent record finds its turn: leo records a delivery once the
// harness's record shows the turn, so the turn started before the record
// (a little after, for a record's coarse clock), and not long before: a
// delivery's proof takes seconds, a finish after a daemon restart longer.
const (
	sentSlack  = 5 * time.Second
	sentWithin = time.Hour
)

// matchSent names, for each turn of conversation conv, the sent record of
// the message leo delivered as that turn (an index into sent), or -1 for a
// turn leo did not type. Records are taken in time order, each serving one
// turn: the latest not yet served with its words (white space aside) that
// started before the record, in its conversation. So a person's turn of
// the same words earlier is never taken for leo's, nor a turn of another
// conversation.
func matchSent(turns []harness.Turn, sent []sentRecord, conv string) []int {
	byKey := map[string][]int{}
	for i, t := range turns {
		k := textKey(t.User)
		byKey[k] = append(byKey[k], i)
	}
	out := make([]int, len(turns))
	for i := range out {
		out[i] = -1
	}
	for j, s := range sent {
		if s.Conversation != "" && conv != "" && s.Conversation != conv {
			continue
		}
		cands := byKey[s.Digest]
		for k := len(cands) - 1; k >= 0; k-- {
			i := cands[k]
			st := turns[i].StartedAt
			if out[i] >= 0 || st.After(s.At.Add(sentSlack)) {
				continue
			}
			if st.Before(s.At.Add(-sentWithin)) {
				break
			}
			out[i] = j
			break
		}
	}
	return out
}

// settleRunning marks interrupted the turns that run by the record but
// cannot any more: those of a conversation that is not the agent's
// current one, and those begun before the TUI's current launch (a killed
// TUI never wrote their end).
func settleRunning(turns []harness.Turn, current bool, launched time.Time) {
	for i := range turns {
		t := &turns[i]
		if t.Outcome != harness.OutcomeRunning && t.Outcome != "" {
			continue
		}
		if !current || (!launched.IsZero() && t.StartedAt.Before(launched)) {
			t.Outcome = harness.OutcomeInterrupted
		}
	}
}

// apiTurn is t as the API shows it.
func apiTurn(t harness.Turn) api.Turn {
	out := api.Turn{
		ID: t.ID, StartedAt: t.StartedAt.UTC(), Outcome: string(t.Outcome), Error: t.Error,
		User: api.TurnUser{Text: t.User}, Reply: api.TurnReply{Text: t.Reply},
		Usage: t.Usage, CostUSD: t.CostUSD, Tools: []api.ToolCall{},
	}
	if out.Outcome == "" {
		out.Outcome = api.OutcomeTurnRunning
	}
	if !t.EndedAt.IsZero() {
		e := t.EndedAt.UTC()
		out.EndedAt = &e
	}
	for _, c := range t.Tools {
		out.Tools = append(out.Tools, api.ToolCall{Name: c.Name, Input: c.Input})
	}
	return out
}

// waitPoll is how often a waiting send reads the record again when
// nothing woke it: the harness writes its record on its own schedule
// (claude after its Stop hook ran), and reading is incremental.
const waitPoll = 250 * time.Millisecond

// Message is message id's outcome for agent name: queued, in flight,
// delivered (with the reply once its turn ended) or failed. With wait
// api.WaitDelivered or api.WaitReply it returns once the message got that
// far, or failed; ctx ending first is wait_timeout, and the message goes
// on: a wait never cancels it.
func (m *Manager) Message(ctx context.Context, name, id, wait string) (api.MessageOutcome, error) {
	a, err := m.lookup(name)
	if err != nil {
		return api.MessageOutcome{}, err
	}
	if wait != "" && wait != api.WaitDelivered && wait != api.WaitReply {
		return api.MessageOutcome{}, api.Errorf(api.CodeInvalidArgs, "wait: %q is not one of %q, %q", wait, api.WaitDelivered, api.WaitReply)
	}
	for {
		a.mu.Lock()
		if a.changed == nil {
			a.changed = make(chan struct{})
		}
		changed := a.changed
		a.mu.Unlock()
		out, err := a.outcome(ctx, id, wait == api.WaitReply)
		if err != nil && ctx.Err() != nil && wait != "" {
			// The wait's deadline came during a read: that is the wait
			// running out, not a fault.
			return out, api.Errorf(api.CodeWaitTimeout, "agent %s: message %s: the wait ended; the message goes on (leo agent message %s %s tells its outcome later)", name, id, name, id)
		}
		if err != nil {
			return out, err
		}
		done := out.Status == api.MessageFailed ||
			(wait != api.WaitReply && out.Status == api.MessageDelivered) ||
			out.Reply != nil
		if wait == "" || done {
			return out, nil
		}
		select {
		case <-ctx.Done():
			return out, api.Errorf(api.CodeWaitTimeout, "agent %s: message %s is %s%s; the wait ended, the message goes on (leo agent message %s %s tells its outcome later)",
				name, id, strings.ReplaceAll(out.Status, "_", " "), waitingClause(out.Waiting), name, id)
		case <-changed:
		case <-m.clk.After(waitPoll):
		}
	}
}

func waitingClause(w string) string {
	if w == "" {
		return ""
	}
	return " (" + w + ")"
}

// outcome is message id's outcome now; withReply reads the harness's
// record for the reply of a delivered message.
func (a *agent) outcome(ctx context.Context, id string, withReply bool) (api.MessageOutcome, error) {
	m := a.m
	a.mu.Lock()
	name := a.rec.Name
	out := api.MessageOutcome{ID: id, Agent: name}
	var done *delivery.Item
	if it, ok := a.items[id]; ok {
		out.Status = api.MessageQueued
		if a.rec.InFlight != nil && a.rec.InFlight.ID == id {
			out.Status = api.MessageInFlight
		}
		out.Waiting = a.waitingLocked(it)
	} else {
		for i := len(a.outcomes) - 1; i >= 0; i-- {
			if a.outcomes[i].ID == id {
				done = a.outcomes[i]
				break
			}
		}
	}
	attn := a.attentionLocked()
	a.mu.Unlock()
	if out.Status != "" {
		return out, nil
	}
	if done != nil {
		if err := done.Err(); err != nil {
			out.Status, out.Reason = api.MessageFailed, err.Error()
			if errors.Is(err, delivery.ErrCancelled) {
				out.Reason = "cancelled: the agent was stopped or leo shut down"
			}
			return out, nil
		}
	}
	// Delivered, by what this daemon saw or by the sent log (a message
	// delivered before a restart).
	sent, err := m.readSent(name)
	if err != nil {
		return out, api.Errorf(api.CodeInternal, "agent %s: reading the sent log: %w", name, err)
	}
	// The newest record of the id: an id a sender reuses once leo forgot
	// it (api.RememberedIDFor) names today's message, not yesterday's.
	rec := -1
	for j := len(sent) - 1; j >= 0; j-- {
		if sent[j].ID == id {
			rec = j
			break
		}
	}
	if rec < 0 {
		if done != nil {
			out.Status = api.MessageDelivered // its sent line was not written
			return out, nil
		}
		return out, api.Errorf(api.CodeNotFound, "agent %s: no message %q queued, in delivery or delivered lately", name, id)
	}
	out.Status = api.MessageDelivered
	if !withReply {
		return out, nil
	}
	a.mu.Lock()
	current := a.rec.SessionID
	a.mu.Unlock()
	newest := sent[rec]
	conv := cmpOr(newest.Conversation, current)
	turns, sent, err := a.readConversation(ctx, conv)
	if err != nil {
		return out, err
	}
	settleRunning(turns, conv == current, a.launchedAt())
	for i, j := range matchSent(turns, sent, conv) {
		if j < 0 || sent[j].ID != id || !sent[j].At.Equal(newest.At) {
			continue
		}
		t := turns[i]
		if t.Outcome == harness.OutcomeRunning || t.Outcome == "" {
			out.Waiting = "its turn runs"
			if attn != nil && attn.State == api.AttentionNeedsInput {
				out.Waiting = "its turn waits for a person: " + promptLine(attn)
			}
			return out, nil
		}
		out.Reply = &api.TurnReply{Text: t.Reply}
		out.Outcome, out.Usage, out.CostUSD = string(t.Outcome), t.Usage, t.CostUSD
		if t.Outcome != harness.OutcomeOK {
			out.Reason = cmpOr(t.Error, fmt.Sprintf("the turn ended %s", t.Outcome))
		}
		return out, nil
	}
	if launched := a.launchedAt(); launched.After(newest.At) {
		// The TUI was relaunched since the delivery and its turn is in no
		// record leo reads (a conversation whose id was not learned yet):
		// no reply will come, and the wait says so.
		out.Reply, out.Outcome = &api.TurnReply{}, api.OutcomeTurnInterrupted
		out.Reason = "the TUI was relaunched during the turn and its record of the turn cannot be found (its conversation's id was not known yet)"
		return out, nil
	}
	out.Waiting = "the harness has not recorded its turn yet"
	return out, nil
}

// launchedAt is when a's current TUI was launched (zero: not running).
func (a *agent) launchedAt() time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.rec.StartedAt == nil {
		return time.Time{}
	}
	return *a.rec.StartedAt
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// waitingLocked says what queued message it waits for; a.mu must be held.
func (a *agent) waitingLocked(it *delivery.Item) string {
	ahead := 0
	for _, x := range a.items {
		if x != it && x.Enqueued.Before(it.Enqueued) {
			ahead++
		}
	}
	var why []string
	if ahead > 0 {
		why = append(why, fmt.Sprintf("%d ahead of it", ahead))
	}
	if at := a.attentionLocked(); at != nil && at.State == api.AttentionNeedsInput {
		why = append(why, "the agent waits for a person: "+promptLine(at))
	}
	if held := a.heldWhyLocked(); held != "" {
		why = append(why, held)
	}
	if a.m.DeliveriesPaused() {
		why = append(why, "deliveries are paused by a drain")
	}
	if a.rec.State != api.StateRunning {
		why = append(why, "the agent is "+string(a.rec.State))
	}
	return strings.Join(why, "; ")
}

func promptLine(at *api.Attention) string {
	if at.Prompt != nil && at.Prompt.Text != "" {
		return api.FirstLine(at.Prompt.Text)
	}
	return cmpOr(at.Detail, "a prompt")
}

// wakeLocked wakes the waiters of a's messages; a.mu must be held.
func (a *agent) wakeLocked() {
	if a.changed != nil {
		close(a.changed)
		a.changed = nil
	}
}

// SendAndWait queues req and, with req.Wait set, waits (bounded by
// req.Timeout, at most api.MaxWait) for the message's outcome.
func (m *Manager) SendAndWait(ctx context.Context, name string, req api.SendRequest) (api.MessageOutcome, error) {
	wait := req.Wait
	if wait != api.WaitDelivered && wait != api.WaitReply {
		return api.MessageOutcome{}, api.Errorf(api.CodeInvalidArgs, "wait: %q is not one of %q, %q", wait, api.WaitDelivered, api.WaitReply)
	}
	timeout, err := api.ParseWaitTimeout(req.Timeout)
	if err != nil {
		return api.MessageOutcome{}, err
	}
	if wait == api.WaitReply {
		// Refused before anything is queued: a reply that cannot be read
		// must not cost a message sent for nothing.
		a, err := m.lookup(name)
		if err != nil {
			return api.MessageOutcome{}, err
		}
		if h, hn := a.harness(); h == nil {
			return api.MessageOutcome{}, api.Errorf(api.CodeConfigError, "send to %s: harness %q is not registered", name, hn)
		} else if _, ok := h.(harness.ConversationReader); !ok {
			return api.MessageOutcome{}, api.Errorf(api.CodeUnsupported, "send to %s: harness %s keeps no conversation record leo can read, so there is no reply to wait for (send without --reply)", name, hn)
		}
	}
	res, err := m.SendMessage(ctx, name, req)
	if err != nil {
		return api.MessageOutcome{}, err
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return m.Message(wctx, name, res.ID, wait)
}
