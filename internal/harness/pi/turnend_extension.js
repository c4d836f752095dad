// leo's signals from pi. leo writes this file and loads it into the agent's
// TUI with `pi -e <this file>`; edits are overwritten. The hook command is
// in LEO_PI_HOOK (a JSON array: leo's binary and its arguments). For the
// events attention and persistent tasks need it runs that command with one
// JSON object on stdin (docs/harness-behaviour/pi.md, "Signals"):
//
//   - {"event":"agent_start"} when pi starts working on a prompt
//     (also on an automatic retry: then "retry" is true);
//   - {"event":"agent_end"} when it is done: the prompt's messages
//     ("inputs", with any steered in while it ran),
//     the last assistant text ("reply"), its stopReason and errorMessage,
//     and "retrying": true when the error is one pi retries on its own
//     (its auto-retry: then another agent_start follows, and the turn is
//     not over).
//
// Every payload carries the session file. Commands run one after another,
// in the events' order; pi never waits for them, and nothing here throws
// into pi.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

let command = [];
try {
  command = JSON.parse(process.env.LEO_PI_HOOK || "[]");
} catch {
  command = [];
}

// Errors pi retries (rate limits, overloads, server and network errors),
// and how often (settings.json "retry"; pi's defaults: on, 3 times).
const retryable = /overloaded|rate.?limit|too many requests|\b429\b|\b5\d\d\b|unavailable|server.?error|internal.?error|network|connection|socket|fetch failed|upstream|timed? ?out|timeout|terminated|ended without/i;

const retrySettings = (cwd) => {
  const out = { enabled: true, maxRetries: 3 };
  const agentDir = process.env.PI_CODING_AGENT_DIR || join(homedir(), ".pi", "agent");
  for (const file of [join(agentDir, "settings.json"), join(cwd || ".", ".pi", "settings.json")]) {
    try {
      const r = JSON.parse(readFileSync(file, "utf8"))?.retry;
      if (typeof r?.enabled === "boolean") out.enabled = r.enabled;
      if (Number.isInteger(r?.maxRetries)) out.maxRetries = r.maxRetries;
    } catch {}
  }
  return out;
};

const textOf = (content) => {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  let texts = [];
  for (const p of content) {
    if (p?.type === "text" && typeof p.text === "string") texts.push(p.text);
    if (p?.type === "toolCall") texts = [];
  }
  return texts.join("\n");
};

let queue = Promise.resolve();
const post = (payload) => {
  if (command.length === 0) return;
  const body = JSON.stringify({ source: "leo-pi", time: Date.now(), ...payload });
  queue = queue.then(
    () =>
      new Promise((resolve) => {
        try {
          const child = spawn(command[0], command.slice(1), { stdio: ["pipe", "ignore", "ignore"] });
          child.on("error", () => resolve());
          child.on("close", () => resolve());
          child.stdin.on("error", () => {});
          child.stdin.end(body);
        } catch {
          resolve();
        }
      }),
  );
};

export default function (pi) {
  let inputs = []; // the prompt the next agent_end ends
  let failures = 0; // error endings since that prompt
  let retrying = false;
  const file = (ctx) => {
    try {
      return ctx.sessionManager.getSessionFile() || "";
    } catch {
      return "";
    }
  };
  pi.on("agent_start", async (_event, ctx) => {
    post({ event: "agent_start", session_file: file(ctx), retry: retrying });
  });
  pi.on("agent_end", async (event, ctx) => {
    const messages = Array.isArray(event?.messages) ? event.messages : [];
    // The prompt's messages (and any steered in while it ran); a retry's
    // agent_end has none, and ends the prompt kept from the first.
    const users = messages.filter((m) => m?.role === "user").map((m) => textOf(m.content));
    if (users.length > 0) inputs = users;
    let last;
    for (const m of messages) if (m?.role === "assistant") last = m;
    const stop = last?.stopReason || "";
    const error = typeof last?.errorMessage === "string" ? last.errorMessage : "";
    retrying = false;
    if (stop === "error") {
      const s = retrySettings(ctx?.cwd || process.cwd());
      failures++;
      retrying = s.enabled && retryable.test(error) && failures <= s.maxRetries;
    }
    post({
      event: "agent_end",
      session_file: file(ctx),
      inputs: retrying ? [] : inputs,
      reply: textOf(last?.content).slice(0, 65536),
      stop_reason: stop,
      error: error.slice(0, 4096),
      retrying,
    });
    if (!retrying) {
      inputs = [];
      failures = 0;
    }
  });
}
