package hooks

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// OpenCode has no hook commands: it loads JS plugins from
// .opencode/plugins/ (the project's) and ~/.config/opencode/plugins/ (the
// user's). ckpt's install writes one, ckpt.js, which runs `ckpt hook
// opencode` — ckpt's own protocol (see [parseGeneric]) — at the plugin
// hooks below: chat.message (the user's message, before the model sees
// it: begin a turn), tool.execute.before (an edit tool's file, kept if
// it is ignored), tool.execute.after (a tool call, kept for the
// turn's messages) and the session.idle event (the turn is over: end it,
// with the replies and tool calls). It spawns ckpt synchronously, so the
// checkpoint is taken before OpenCode goes on, or exits (`opencode run`).
const OpenCode = "opencode"

// opencodeMarker is the plugin file's first line: a file that starts with
// it is ckpt's, for install to update and uninstall to remove.
const opencodeMarker = "// ckpt: checkpoints every OpenCode turn."

// opencodeCommandRE finds the command in ckpt's plugin file.
var opencodeCommandRE = lazyRE(`(?m)^const CKPT = ("(?:[^"\\]|\\.)*");$`)

func opencodePlugin(command string) []byte {
	return []byte(opencodeMarker + ` It was written by 'ckpt hook opencode
// install'; 'ckpt hook opencode uninstall' removes it. Each turn of an
// OpenCode session becomes a turn of a ckpt session: a checkpoint of the
// whole workspace when your message arrives and another when OpenCode is
// done, with the files the turn changed, the replies and tool calls.
import { spawnSync } from "node:child_process";

const CKPT = ` + strconv.Quote(command) + `;

// OpenCode's tools that write the file their filePath names.
const EDIT_TOOLS = new Set(["write", "edit", "multiedit"]);

// hook runs ckpt's hook with one event of ckpt's protocol on stdin, and
// waits for it: the checkpoint is taken before OpenCode goes on. ckpt
// reports its own failures (hook log, ckpt hook status) and never fails.
function hook(payload) {
  try {
    spawnSync(CKPT, ["hook", "opencode"], {
      input: JSON.stringify(payload),
      stdio: ["pipe", "ignore", "ignore"],
      timeout: 30000,
    });
  } catch {}
}

// describe is what a tool call shows in ckpt's conversation: the command,
// path, pattern or URL it was given, else its arguments as JSON.
function describe(args) {
  if (args && typeof args === "object") {
    for (const k of ["command", "filePath", "path", "pattern", "url", "query", "description"]) {
      if (typeof args[k] === "string" && args[k] !== "") return args[k].slice(0, 2048);
    }
  }
  try {
    return (JSON.stringify(args ?? null) ?? "").slice(0, 2048);
  } catch {
    return "";
  }
}

export const Ckpt = async ({ directory }) => {
  const turns = new Map(); // session id -> the turn's messages so far
  const turn = (id) => {
    let t = turns.get(id);
    if (!t) {
      t = { msgs: [], texts: new Map(), assistant: new Set() };
      turns.set(id, t);
    }
    return t;
  };
  return {
    "chat.message": async (input, output) => {
      const prompt = (output?.parts ?? [])
        .filter((p) => p.type === "text" && !p.synthetic)
        .map((p) => p.text)
        .join("\n");
      turns.delete(input.sessionID);
      hook({ event: "turn_begin", session_id: input.sessionID, cwd: directory, agent: "opencode", prompt });
    },
    "tool.execute.before": async (input, output) => {
      // Before an edit tool writes: a file the ignore rules leave out is
      // kept in the turn, so a rewind puts it back.
      const file = output?.args?.filePath;
      if (EDIT_TOOLS.has(input.tool) && typeof file === "string" && file !== "") {
        hook({ event: "before_edit", session_id: input.sessionID, cwd: directory, paths: [file] });
      }
    },
    "tool.execute.after": async (input) => {
      turn(input.sessionID).msgs.push({ role: "tool", tool: input.tool, content: describe(input.args) });
    },
    event: ({ event }) => {
      const p = event?.properties ?? {};
      if (event.type === "message.updated" && p.info?.role === "assistant") {
        turn(p.info.sessionID).assistant.add(p.info.id);
      } else if (event.type === "message.part.updated" && p.part?.type === "text" && !p.part.synthetic) {
        const t = turn(p.part.sessionID);
        let m = t.texts.get(p.part.id);
        if (!m) {
          m = { role: "assistant", content: "", message: p.part.messageID };
          t.texts.set(p.part.id, m);
          t.msgs.push(m);
        }
        m.content = p.part.text ?? "";
      } else if (event.type === "session.idle") {
        const t = turns.get(p.sessionID);
        turns.delete(p.sessionID);
        const messages = (t?.msgs ?? [])
          .filter((m) => m.role !== "assistant" || (t.assistant.has(m.message) && m.content.trim() !== ""))
          .map(({ role, tool, content }) => ({ role, tool, content }));
        hook({ event: "turn_end", session_id: p.sessionID, cwd: directory, messages });
      }
    },
  };
};
`)
}

// opencodeCommand returns the ckpt command in a plugin file that is ckpt's
// ("" and false if it is not).
func opencodeCommand(src []byte) (string, bool) {
	if !bytes.HasPrefix(src, []byte(opencodeMarker)) {
		return "", false
	}
	m := opencodeCommandRE().FindSubmatch(src)
	if m == nil {
		return "", true
	}
	c, err := strconv.Unquote(string(m[1]))
	if err != nil {
		return "", true
	}
	return c, true
}

// opencodeInstall writes ckpt's plugin file, or updates the command in
// one install wrote; a file of the same name that is not ckpt's is left
// alone.
func opencodeInstall(file string, opts InstallOptions, ch *Change) error {
	return editFile(file, opts, ch, func(src []byte) ([]byte, error) {
		want := opencodePlugin(opts.Command)
		if len(bytes.TrimSpace(src)) == 0 {
			ch.Added = append(ch.Added, Events[OpenCode]...)
			return want, nil
		}
		if _, ours := opencodeCommand(src); !ours {
			return nil, fmt.Errorf("%s is not ckpt's plugin (it does not start with %q): ckpt leaves it alone; move it, or install with --user", file, opencodeMarker)
		}
		if !bytes.Equal(src, want) {
			ch.Updated = append(ch.Updated, Events[OpenCode]...)
		}
		return want, nil
	})
}

// opencodeUninstall removes ckpt's plugin file (kept in the backups
// first); a file of the same name that is not ckpt's stays.
func opencodeUninstall(file string, opts InstallOptions, ch *Change) error {
	return removeOwnFile(OpenCode, file, opts, ch, func(src []byte) (bool, []string) {
		if _, ours := opencodeCommand(src); !ours {
			return false, nil // a plugin of the user's, by that name
		}
		return true, Events[OpenCode]
	})
}

// opencodeStatus fills in what ckpt's plugin file installs.
func opencodeStatus(in *Installed) {
	src, _, err := readSettings(in.File)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			in.Error = err.Error()
		}
		in.Missing = append(in.Missing, Events[OpenCode]...)
		return
	}
	in.Exists = true
	cmd, ours := opencodeCommand(src)
	if !ours { // a plugin of the user's, by that name
		in.Missing = append(in.Missing, Events[OpenCode]...)
		return
	}
	in.Events = append(in.Events, Events[OpenCode]...)
	in.Commands = append(in.Commands, hookCommand(cmd, OpenCode))
}

// opencodeConfigDir is OpenCode's user configuration directory:
// $XDG_CONFIG_HOME/opencode, else ~/.config/opencode.
func opencodeConfigDir() (string, error) {
	if d := os.Getenv("XDG_CONFIG_HOME"); d != "" {
		return filepath.Join(d, "opencode"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".config", "opencode"), nil
}
