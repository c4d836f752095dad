// leo's signals from opencode. leo writes this file and loads it through
// OPENCODE_CONFIG_CONTENT ("plugin": [[<this file>, {command}]]); edits are
// overwritten. For each event attention needs it runs options.command with
// {type, properties, messages, time} as JSON on stdin (docs/harness-behaviour/
// opencode.md, "Signals"):
//
//   - session.status busy (once per turn: opencode repeats it every step),
//     and retry (a failed model call it will try again, and when);
//   - permission.asked (the tool, its patterns, the command or path it names;
//     never a diff), permission.replied;
//   - question.asked (the questions and their options' labels),
//     question.replied, question.rejected;
//   - session.idle (a turn's end; once, where opencode repeats it) and
//     session.error (a failed turn), with messages: the session's last user
//     message and what followed it, text parts only. No other event fetches
//     anything.
//
// time is when the payload was made (a retry-after in seconds counts from it).
//
// Events of a subagent's session (one with a parent) are left out, but for
// its prompts: the TUI asks them too. The commands run one after another,
// in the events' order, so leo reads them in that order; opencode never
// waits for them, and nothing here throws into opencode.
import { spawn } from "node:child_process";

const textOnly = (m) => ({
  info: {
    id: m?.info?.id,
    sessionID: m?.info?.sessionID,
    role: m?.info?.role,
    parentID: m?.info?.parentID,
    error: m?.info?.error,
  },
  parts: (Array.isArray(m?.parts) ? m.parts : [])
    .filter((p) => p?.type === "text")
    .map((p) => ({ type: p.type, text: p.text, synthetic: p.synthetic, ignored: p.ignored })),
});

// short keeps a string field of a prompt, bounded (a command can be long).
const short = (v) => (typeof v === "string" ? v.slice(0, 4000) : undefined);
const strings = (v) => (Array.isArray(v) ? v.filter((s) => typeof s === "string").slice(0, 50).map(short) : []);

const permission = (p) => ({
  id: p?.id,
  sessionID: p?.sessionID,
  permission: short(p?.permission),
  patterns: strings(p?.patterns),
  always: strings(p?.always),
  metadata: {
    command: short(p?.metadata?.command),
    description: short(p?.metadata?.description),
    filepath: short(p?.metadata?.filepath),
    parentDir: short(p?.metadata?.parentDir),
    pattern: short(p?.metadata?.pattern),
    path: short(p?.metadata?.path),
    url: short(p?.metadata?.url),
    query: short(p?.metadata?.query),
    subagent_type: short(p?.metadata?.subagent_type),
  },
});

const question = (p) => ({
  id: p?.id,
  sessionID: p?.sessionID,
  questions: (Array.isArray(p?.questions) ? p.questions : []).slice(0, 20).map((q) => ({
    header: short(q?.header),
    question: short(q?.question),
    multiple: q?.multiple === true,
    custom: q?.custom !== false,
    options: (Array.isArray(q?.options) ? q.options : []).slice(0, 50).map((o) => ({ label: short(o?.label) })),
  })),
});

// runWithin: a command that never ends holds the queue this long at most.
const runWithin = 15000;
const fetchWithin = 5000;
const maxQueued = 64;

export const LeoTurnEnd = async ({ client }, options) => {
  const command = Array.isArray(options?.command) ? options.command.map(String) : [];
  const children = new Set(); // subagent sessions
  const busy = new Set(); // sessions whose busy was sent since their last idle
  const ended = new Set(); // sessions whose last event sent was session.idle
  let queue = Promise.resolve();
  let queued = 0;

  const run = (payload) =>
    new Promise((resolve) => {
      try {
        const child = spawn(command[0], command.slice(1), { stdio: ["pipe", "ignore", "ignore"] });
        const timer = setTimeout(resolve, runWithin);
        timer.unref?.();
        const done = () => {
          clearTimeout(timer);
          resolve();
        };
        child.on("error", done);
        child.on("close", done);
        child.stdin.on("error", () => {});
        child.stdin.end(payload);
      } catch {
        resolve();
      }
    });

  // send queues one payload of session id (a promise of its JSON, "" for
  // none) behind the ones before it.
  const send = (id, type, payload) => {
    if (type === "session.idle") ended.add(id);
    else ended.delete(id);
    if (queued >= maxQueued) return;
    queued++;
    queue = queue
      .then(() => payload)
      .then((p) => (p ? run(p) : undefined))
      .catch(() => {})
      .finally(() => {
        queued--;
      });
  };
  const json = (type, properties, messages = []) => JSON.stringify({ type, properties, messages, time: Date.now() });

  // turnMessages gives up after fetchWithin: a fetch that never answers
  // must not hold the signals behind it.
  const turnMessages = async (id) => {
    if (!id) return [];
    try {
      let timer;
      const late = new Promise((resolve) => {
        timer = setTimeout(resolve, fetchWithin);
        timer.unref?.();
      });
      const res = await Promise.race([client.session.messages({ path: { id } }), late]).finally(() => clearTimeout(timer));
      const all = Array.isArray(res?.data) ? res.data : [];
      for (let i = all.length - 1; i >= 0; i--) {
        if (all[i]?.info?.role === "user") return all.slice(i).map(textOnly);
      }
    } catch {}
    return [];
  };

  return {
    event: async ({ event }) => {
      try {
        if (command.length === 0) return;
        const type = event?.type;
        const props = event?.properties ?? {};
        switch (type) {
          case "session.created":
          case "session.updated":
            if (props.info?.parentID && props.info?.id) children.add(props.info.id);
            return;
          case "session.status": {
            const id = props.sessionID;
            if (children.has(id)) return;
            const s = props.status ?? {};
            if (s.type === "idle") {
              busy.delete(id);
            } else if (s.type === "busy") {
              if (busy.has(id)) return;
              busy.add(id);
              send(id, type, json(type, { sessionID: id, status: { type: "busy" } }));
            } else if (s.type === "retry") {
              busy.delete(id); // the busy after the wait is sent: the turn goes on
              const a = s.action;
              send(
                id,
                type,
                json(type, {
                  sessionID: id,
                  status: {
                    type: "retry",
                    attempt: s.attempt,
                    message: short(s.message),
                    next: s.next,
                    action: a ? { reason: short(a.reason), title: short(a.title), message: short(a.message) } : undefined,
                  },
                }),
              );
            }
            return;
          }
          case "permission.asked":
            send(props.sessionID, type, json(type, permission(props)));
            return;
          case "permission.replied":
            send(props.sessionID, type, json(type, { sessionID: props.sessionID, requestID: props.requestID, reply: props.reply }));
            return;
          case "question.asked":
            send(props.sessionID, type, json(type, question(props)));
            return;
          case "question.replied":
          case "question.rejected":
            send(props.sessionID, type, json(type, { sessionID: props.sessionID, requestID: props.requestID }));
            return;
          case "session.idle":
          case "session.error": {
            const id = props.sessionID;
            if (children.has(id)) return;
            if (type === "session.idle") {
              busy.delete(id);
              // opencode says idle twice after a failed turn.
              if (ended.has(id)) return;
            }
            send(id, type, turnMessages(id).then((messages) => json(type, props, messages)));
            return;
          }
        }
      } catch {}
    },
  };
};
