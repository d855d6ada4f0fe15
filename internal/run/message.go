package run

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"
)

// Message is an inbox message: Markdown with optional YAML front matter.
type Message struct {
	// Name is the file name in the inbox (e.g. "2025022514320000-0.md").
	Name      string
	ID        string // <chain>-<seq>
	Chain     string
	Seq       int
	Type      string // "spec" or "task"
	InputFile string // relative to the workspace; "" if none
	Routine   string
	// Custom holds the other front matter fields, as strings.
	Custom map[string]string
	Body   string

	hasID, hasChain, hasSeq, hasType, hasRoutine bool
}

// MessageError reports a message that cannot be processed; nothing was
// written for it.
type MessageError struct {
	Name string
	Err  error
}

func (e *MessageError) Error() string { return fmt.Sprintf("message %s: %v", e.Name, e.Err) }

// Unwrap returns the cause.
func (e *MessageError) Unwrap() error { return e.Err }

// ErrMessageTooLarge: a message file over [MaxMessageSize].
var ErrMessageTooLarge = errors.New("it is larger than the 1 MiB limit for messages")

// ErrFrontMatterTooLarge: a message whose front matter is over
// [MaxFrontMatter].
var ErrFrontMatterTooLarge = errors.New("its front matter is larger than the 64 KiB limit")

// ParseMessage parses a message file. Front matter (between a first line
// "---" and the next "---" line) must be a YAML mapping. A message larger
// than [MaxMessageSize], whose front matter is larger than
// [MaxFrontMatter], or whose front matter is over the YAML limits
// ([MaxDecodedSize], [MaxAliases]), is a [*MessageError].
func ParseMessage(name string, data []byte) (*Message, error) {
	if len(data) > MaxMessageSize {
		return nil, &MessageError{name, ErrMessageTooLarge}
	}
	m := &Message{Name: name, Custom: map[string]string{}}
	text := string(data)
	trimmed := strings.TrimLeft(text, " \t\r\n")
	if !strings.HasPrefix(trimmed, "---") {
		m.Body = text
		return m, nil
	}
	rest := trimmed[3:]
	nl := strings.IndexByte(rest, '\n')
	if nl < 0 || strings.TrimSpace(rest[:nl]) != "" {
		m.Body = text // "---..." on the first line is not a fence
		return m, nil
	}
	rest = rest[nl+1:]
	end := -1
	if strings.HasPrefix(rest, "---") {
		end = 0
	} else if i := strings.Index(rest, "\n---"); i >= 0 {
		end = i + 1
	}
	if end < 0 {
		return nil, &MessageError{name, fmt.Errorf("front matter is not closed (no line \"---\" after the first)")}
	}
	front := rest[:end]
	if len(front) > MaxFrontMatter {
		return nil, &MessageError{name, ErrFrontMatterTooLarge}
	}
	body := rest[end+3:]
	if i := strings.IndexByte(body, '\n'); i >= 0 && strings.TrimSpace(body[:i]) == "" {
		body = body[i+1:]
	} else if strings.TrimSpace(body) == "" {
		body = ""
	}
	m.Body = body
	var fields map[string]any
	if err := DecodeYAML([]byte(front), &fields); err != nil {
		var le *YAMLLimitError
		if errors.As(err, &le) {
			return nil, &MessageError{name, fmt.Errorf("front matter refused: %v", err)}
		}
		return nil, &MessageError{name, fmt.Errorf("front matter is not YAML: %v", err)}
	}
	for k, v := range fields {
		switch k {
		case "id":
			m.ID, m.hasID = scalar(v), v != nil
		case "chain":
			m.Chain, m.hasChain = scalar(v), v != nil
		case "seq":
			switch n := v.(type) {
			case int:
				if n < 0 {
					return nil, &MessageError{name, fmt.Errorf("seq %d is negative", n)}
				}
				m.Seq, m.hasSeq = n, true
			case nil:
			default:
				return nil, &MessageError{name, fmt.Errorf("seq must be a whole number, not %q", scalar(v))}
			}
		case "type":
			if t := scalar(v); t == "spec" || t == "task" {
				m.Type, m.hasType = t, true
			}
		case "input_file":
			m.InputFile = scalar(v)
		case "routine":
			m.Routine, m.hasRoutine = scalar(v), scalar(v) != ""
		default:
			if !validKey(k) {
				return nil, &MessageError{name, fmt.Errorf("front matter key %q is not a plain name", k)}
			}
			m.Custom[k] = scalar(v)
		}
	}
	// ckpt writes the message back normalized, its aliases expanded: that
	// must be a message it reads too.
	if len(m.Marshal())-len(m.Body) > MaxFrontMatter-normSlack {
		return nil, &MessageError{name, fmt.Errorf("front matter refused: written out with its aliases expanded, it would be larger than the 64 KiB limit")}
	}
	return m, nil
}

// normSlack is room in the front matter for what normalizing a message
// adds (id, chain, seq, type, routine: names of at most a few hundred
// bytes).
const normSlack = 4 << 10

var keyRE = lazyRE(`^[A-Za-z_][A-Za-z0-9_-]*$`)

func validKey(k string) bool { return keyRE().MatchString(k) }

// scalar renders a YAML value as a string (nil as "").
func scalar(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case int, int64, uint64, float64, bool:
		return fmt.Sprint(x)
	}
	b, _ := yaml.Marshal(v)
	return strings.TrimSpace(string(b))
}

var chainName = lazyRE(`^(.{14,})-(\d+)\.md$`)

// Normalized reports whether the message already has every field a run
// needs (then it is not rewritten, as Decree does).
func (m *Message) Normalized() bool {
	return m.hasID && m.hasChain && m.hasSeq && m.hasType && m.hasRoutine
}

// Normalize fills missing fields the way Decree does: chain and seq from a
// "<chain>-<seq>.md" file name, else newChain() and 0; id = <chain>-<seq>;
// type spec when input_file is set, else task; routine = defaultRoutine.
func (m *Message) Normalize(defaultRoutine string, newChain func() string) {
	if m.Normalized() {
		return
	}
	if !m.hasChain || !m.hasSeq {
		if sm := chainName().FindStringSubmatch(m.Name); sm != nil {
			if !m.hasChain {
				m.Chain, m.hasChain = sm[1], true
			}
			if !m.hasSeq {
				m.Seq, _ = strconv.Atoi(sm[2])
				m.hasSeq = true
			}
		}
	}
	if !m.hasChain {
		m.Chain, m.hasChain = newChain(), true
	}
	m.hasSeq = true
	m.ID, m.hasID = fmt.Sprintf("%s-%d", m.Chain, m.Seq), true
	if !m.hasType {
		m.Type = "task"
		if m.InputFile != "" {
			m.Type = "spec"
		}
		m.hasType = true
	}
	if !m.hasRoutine {
		m.Routine, m.hasRoutine = defaultRoutine, true
	}
}

// Marshal renders the message in Decree's normalized form: id, chain, seq,
// type, input_file (if any), routine, then custom fields sorted by name.
func (m *Message) Marshal() []byte {
	var b bytes.Buffer
	b.WriteString("---\n")
	field := func(k, v string) {
		fmt.Fprintf(&b, "%s: %s\n", k, yamlScalar(v))
	}
	field("id", m.ID)
	field("chain", m.Chain)
	fmt.Fprintf(&b, "seq: %d\n", m.Seq)
	field("type", m.Type)
	if m.InputFile != "" {
		field("input_file", m.InputFile)
	}
	field("routine", m.Routine)
	keys := make([]string, 0, len(m.Custom))
	for k := range m.Custom {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		field(k, m.Custom[k])
	}
	b.WriteString("---\n")
	b.WriteString(m.Body)
	return b.Bytes()
}

// yamlScalar writes s plainly when ParseMessage reads it back as the same
// string, quoted otherwise (a chain "2023.10100000000" is a number to
// YAML, which reads back as "2023.101").
func yamlScalar(s string) string {
	var back map[string]any
	if s != "" && !strings.ContainsAny(s, "\n\r") && yaml.Unmarshal([]byte("v: "+s), &back) == nil && len(back) == 1 && scalar(back["v"]) == s {
		return s
	}
	out, _ := yaml.Marshal(s)
	if q := strings.TrimSpace(string(out)); readsBack(q, s) {
		return q
	}
	// A block scalar yaml.v3 does not read back as it wrote it (a value
	// starting with an empty line, under a key, loses it): double quotes,
	// which escape every character, always do.
	out, _ = yaml.Marshal(&yaml.Node{Kind: yaml.ScalarNode, Style: yaml.DoubleQuotedStyle, Tag: "!!str", Value: s})
	return strings.TrimSpace(string(out))
}

// readsBack reports whether the YAML scalar q, as a field's value, reads
// back as s.
func readsBack(q, s string) bool {
	var back map[string]any
	return yaml.Unmarshal([]byte("v: "+q+"\n"), &back) == nil && len(back) == 1 && scalar(back["v"]) == s
}

// NewChainID returns a chain id for now: YYYYMMDDHHmmss and a two-digit
// counter, the first not taken.
func NewChainID(now time.Time, taken func(string) bool) string {
	stamp := now.Format("20060102150405")
	for i := 0; i < 100; i++ {
		c := fmt.Sprintf("%s%02d", stamp, i)
		if !taken(c) {
			return c
		}
	}
	return fmt.Sprintf("%s%02d", now.Add(time.Second).Format("20060102150405"), 0)
}

// ValidID reports whether id is a usable run id: <chain>-<seq> with a
// chain of letters, digits, '.', '_' or '-' and no path separators.
func ValidID(id string) bool {
	i := strings.LastIndexByte(id, '-')
	if i <= 0 || i == len(id)-1 {
		return false
	}
	if _, err := strconv.Atoi(id[i+1:]); err != nil {
		return false
	}
	return runIDRE().MatchString(id) && id != "." && id != ".." && path.Base(id) == id
}

var runIDRE = lazyRE(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// lazyRE compiles expr when it is first used, not when every ckpt
// process starts (a hook's included).
func lazyRE(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// Kebab turns a title into a kebab-case name (Decree's to_kebab_case).
func Kebab(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimRight(b.String(), "-")
}

// NewMessage returns a normalized message built by ckpt (an ad-hoc run or
// a queued spec). An empty routine is filled in by Normalize.
func NewMessage(chain string, seq int, typ, inputFile, routine, body string) *Message {
	m := &Message{Chain: chain, Seq: seq, Type: typ, InputFile: inputFile, Routine: routine, Body: body,
		Custom: map[string]string{}, hasChain: true, hasSeq: true, hasType: true}
	m.ID, m.hasID = fmt.Sprintf("%s-%d", chain, seq), true
	m.Name = m.ID + ".md"
	m.hasRoutine = routine != ""
	return m
}
