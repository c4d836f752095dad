package mcp

import (
	"context"
	"embed"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/blackpaw-studio/leo/internal/api"
)

// skills are the how-to texts of leo_skill, one file per topic.
//
//go:embed skills/*.md
var skills embed.FS

// Topics are leo_skill's topics, in the order the overview lists them.
var Topics = []string{"overview", "messaging", "agents", "tasks"}

// skill answers a topic's text. It needs no daemon: the how-to is always
// there, whatever else fails.
func (t *tools) skill(_ context.Context, _ *sdk.CallToolRequest, a skillArgs) (*sdk.CallToolResult, any, error) {
	topic := strings.ToLower(strings.TrimSpace(a.Topic))
	if topic == "" {
		topic = "overview"
	}
	if !slices.Contains(Topics, topic) {
		return nil, nil, toolError(api.Errorf(api.CodeInvalidArgs, "leo_skill: no topic %q (topics: %s)", a.Topic, strings.Join(Topics, ", ")))
	}
	text, err := skills.ReadFile("skills/" + topic + ".md")
	if err != nil {
		return nil, nil, toolError(api.Errorf(api.CodeInternal, "leo_skill: %w", err))
	}
	out := string(text)
	if who := t.opts.Sender.Label(); who != "" && topic == "overview" {
		out += "\nYou are " + who + " (the sender of your messages).\n"
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: out}}}, nil, nil
}
