package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/BurntSushi/toml"
)

// Codex runs one legacy notify program, set by the top-level key `notify`
// in its config.toml, with the notification JSON as its last argument
// (`ckpt hook codex install --notify`, for a Codex without hooks). Install
// adds that key as one line and Uninstall removes that line; both check
// by decoding the file before and after that nothing else changed. A
// notify program that is not ckpt's is never replaced: Codex runs only
// one, so Install refuses and says so.

func codexArgv(command string) []string { return []string{command, "hook", Codex} }

// tomlString quotes s as a TOML basic string (JSON's escapes are valid
// TOML).
func tomlString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSpace(b.String())
}

func codexLine(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = tomlString(a)
	}
	return "notify = [" + strings.Join(q, ", ") + "]"
}

func decodeTOML(src []byte, file string) (map[string]any, error) {
	m := map[string]any{}
	if _, err := toml.Decode(string(src), &m); err != nil {
		return nil, fmt.Errorf("%s: %v: fix it by hand first; ckpt changes only settings it can read", file, err)
	}
	return m, nil
}

// notifyArgv returns the notify key's value as strings (nil, false if it
// is not a list of strings).
func notifyArgv(v any) ([]string, bool) {
	list, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(list))
	for _, e := range list {
		s, ok := e.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

var notifyLineRE = lazyRE(`^[ \t]*notify[ \t]*=`)

// lines splits src into lines that keep their newline.
func lines(src []byte) [][]byte {
	var out [][]byte
	for len(src) > 0 {
		i := bytes.IndexByte(src, '\n')
		if i < 0 {
			out = append(out, src)
			break
		}
		out = append(out, src[:i+1])
		src = src[i+1:]
	}
	return out
}

// replaceNotifyLine replaces (or, with text "", removes) the one line that
// holds the top-level notify key, checking that the result decodes to
// want.
func replaceNotifyLine(src []byte, text string, want map[string]any, file string) ([]byte, error) {
	ls := lines(src)
	for i, l := range ls {
		if !notifyLineRE().Match(l) {
			continue
		}
		var out []byte
		for j, o := range ls {
			switch {
			case j != i:
				out = append(out, o...)
			case text != "":
				out = append(out, text...)
				if bytes.HasSuffix(o, []byte("\n")) {
					out = append(out, '\n')
				}
			}
		}
		if m, err := decodeTOML(out, file); err == nil && reflect.DeepEqual(m, want) {
			return out, nil
		}
	}
	return nil, fmt.Errorf("%s: cannot find the top-level notify line (is it split over several lines?): change it by hand", file)
}

func codexInstall(src []byte, command string, ch *Change) ([]byte, error) {
	m, err := decodeTOML(src, ch.File)
	if err != nil {
		return nil, err
	}
	argv := codexArgv(command)
	line := codexLine(argv)
	want := map[string]any{}
	for k, v := range m {
		want[k] = v
	}
	wantList := make([]any, len(argv))
	for i, a := range argv {
		wantList[i] = a
	}
	want["notify"] = wantList
	if v, ok := m["notify"]; ok {
		cur, ok := notifyArgv(v)
		switch {
		case ok && reflect.DeepEqual(cur, argv):
			return src, nil
		case ok && isCkptHook(cur, Codex):
			if !isOurs(cur, Codex) {
				// The user's own notify program runs ckpt's hook: theirs.
				ch.Kept = append(ch.Kept, "notify: "+formatNotify(v))
				return src, nil
			}
			out, err := replaceNotifyLine(src, line, want, ch.File)
			if err != nil {
				return nil, err
			}
			ch.Updated = append(ch.Updated, "notify")
			return out, nil
		}
		return nil, fmt.Errorf("%s already has a notify program: notify = %s; Codex runs only one, and ckpt does not replace another: remove that line (or have that program also run `%s hook codex \"$JSON\"`), then install again",
			ch.File, formatNotify(v), shellQuote(command))
	}
	// Root keys must come before any table: insert the line before the
	// first line that is not a comment or blank.
	ls := lines(src)
	at := len(ls)
	for i, l := range ls {
		t := bytes.TrimSpace(l)
		if len(t) > 0 && t[0] != '#' {
			at = i
			break
		}
	}
	var out []byte
	for _, l := range ls[:at] {
		out = append(out, l...)
	}
	if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n")) {
		out = append(out, '\n')
	}
	out = append(out, line+"\n"...)
	for _, l := range ls[at:] {
		out = append(out, l...)
	}
	if got, err := decodeTOML(out, ch.File); err != nil || !reflect.DeepEqual(got, want) {
		return nil, fmt.Errorf("%s: adding the notify line would change other settings: add `%s` at its top by hand", ch.File, line)
	}
	ch.Added = append(ch.Added, "notify")
	return out, nil
}

func codexUninstall(src []byte, ch *Change) ([]byte, error) {
	m, err := decodeTOML(src, ch.File)
	if err != nil {
		return nil, err
	}
	cur, ok := notifyArgv(m["notify"])
	if !ok || !isOurs(cur, Codex) {
		if ok && isCkptHook(cur, Codex) {
			ch.Kept = append(ch.Kept, "notify: "+formatNotify(m["notify"]))
		}
		return src, nil
	}
	want := map[string]any{}
	for k, v := range m {
		if k != "notify" {
			want[k] = v
		}
	}
	out, err := replaceNotifyLine(src, "", want, ch.File)
	if err != nil {
		return nil, err
	}
	ch.Removed = append(ch.Removed, "notify")
	return out, nil
}

func formatNotify(v any) string {
	if argv, ok := notifyArgv(v); ok {
		return codexLine(argv)[len("notify = "):]
	}
	return fmt.Sprint(v)
}

// codexNotifyInstall sets ckpt's legacy notify program in the config.toml
// beside hooks.json (for a Codex without hooks), and takes ckpt's hooks
// out of hooks.json, which Codex would otherwise run too.
func codexNotifyInstall(file string, opts InstallOptions, ch *Change) error {
	ch.Command = strings.Join(codexArgv(opts.Command), " ")
	conf := codexConfigFile(file)
	ch.File = conf
	if err := editFile(conf, opts, ch, func(src []byte) ([]byte, error) { return codexInstall(src, opts.Command, ch) }); err != nil {
		return err
	}
	hc := &Change{Agent: Codex, Scope: ch.Scope, File: file}
	if err := codexHooksUninstall(file, opts, hc, true); err != nil {
		return err
	}
	if hc.Changed {
		ch.Changed = true
		ch.Removed = append(ch.Removed, hc.Removed...)
		ch.Untrusted = hc.Untrusted
	}
	return nil
}
