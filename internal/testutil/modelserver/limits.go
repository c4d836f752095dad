package modelserver

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// LimitReply is the usage or rate limit error each vendor answers, in the
// shape the CLI talking that API reads (taken from the CLIs' own code):
//
//   - Anthropic (claude): 429 rate_limit_error with the unified rate-limit
//     headers a subscription gets (status rejected, reset in Unix seconds)
//     and retry-after;
//   - Responses (codex): 429 usage_limit_reached with resets_at (Unix
//     seconds) and resets_in_seconds, which codex turns into "try again at
//     3:04 PM." and does not retry;
//   - Chat (opencode): 429 rate_limit_exceeded with retry-after, which the
//     AI SDK marks retryable and opencode waits out itself.
//
// resetsAt is the reset the error names.
func LimitReply(api API, resetsAt, now time.Time) Reply {
	in := int(resetsAt.Sub(now).Round(time.Second) / time.Second)
	if in < 0 {
		in = 0
	}
	retryAfter := strconv.Itoa(in)
	switch api {
	case Anthropic:
		return Reply{Status: http.StatusTooManyRequests,
			ErrorBody: `{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed your account's rate limit. Please try again later."}}`,
			Header: map[string]string{
				"retry-after":                          retryAfter,
				"anthropic-ratelimit-unified-status":   "rejected",
				"anthropic-ratelimit-unified-reset":    strconv.FormatInt(resetsAt.Unix(), 10),
				"anthropic-ratelimit-unified-5h-reset": strconv.FormatInt(resetsAt.Unix(), 10),
			}}
	case Responses:
		return Reply{Status: http.StatusTooManyRequests,
			ErrorBody: fmt.Sprintf(`{"error":{"type":"usage_limit_reached","message":"The usage limit has been reached","plan_type":"plus","resets_at":%d,"resets_in_seconds":%d}}`, resetsAt.Unix(), in),
		}
	default:
		return Reply{Status: http.StatusTooManyRequests,
			ErrorBody: `{"error":{"message":"Rate limit reached for requests. Please try again later.","type":"rate_limit_exceeded","param":null,"code":"rate_limit_exceeded"}}`,
			Header:    map[string]string{"retry-after": retryAfter},
		}
	}
}
