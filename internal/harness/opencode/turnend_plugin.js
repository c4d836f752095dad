// leo's turn-end signal for opencode. leo writes this file and loads it
// through OPENCODE_CONFIG_CONTENT ("plugin": [[<this file>, {command}]]);
// edits are overwritten. At the end of every turn (session.idle) and when a
// turn fails (session.error) it runs options.command with the turn as JSON
// on stdin: {type, properties, messages}, messages being the session's last
// user message and what followed it, text parts only. It never throws into
// opencode and never waits for the command.
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

export const LeoTurnEnd = async ({ client }, options) => {
  const command = Array.isArray(options?.command) ? options.command.map(String) : [];
  return {
    event: async ({ event }) => {
      try {
        if (command.length === 0) return;
        if (event?.type !== "session.idle" && event?.type !== "session.error") return;
        const id = event.properties?.sessionID;
        let messages = [];
        if (id) {
          try {
            const res = await client.session.messages({ path: { id } });
            const all = Array.isArray(res?.data) ? res.data : [];
            let last = -1;
            for (let i = all.length - 1; i >= 0; i--) {
              if (all[i]?.info?.role === "user") {
                last = i;
                break;
              }
            }
            if (last >= 0) messages = all.slice(last).map(textOnly);
          } catch {}
        }
        const payload = JSON.stringify({ type: event.type, properties: event.properties ?? {}, messages });
        const child = spawn(command[0], command.slice(1), { stdio: ["pipe", "ignore", "ignore"] });
        child.on("error", () => {});
        child.stdin.on("error", () => {});
        child.stdin.end(payload);
      } catch {}
    },
  };
};
