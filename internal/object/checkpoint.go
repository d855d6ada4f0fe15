package object

import (
	"bufio"
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Checkpoint kinds.
const (
	KindManual     = "manual"
	KindTurn       = "turn"
	KindRun        = "run"
	KindPreRestore = "pre-restore"
	KindEdit       = "edit"
	KindRestore    = "restore"
)

// ValidKind reports whether k is a known checkpoint kind.
func ValidKind(k string) bool {
	switch k {
	case KindManual, KindTurn, KindRun, KindPreRestore, KindEdit, KindRestore:
		return true
	}
	return false
}

// Checkpoint is one immutable state of the workspace.
//
// Its canonical encoding is a sequence of lines, in this order:
//
//	ckpt-checkpoint 1
//	tree <hex>
//	parent <hex>            (zero or more)
//	time <unix nanoseconds>
//	kind <kind>
//	branch <quoted>
//	author <quoted>
//	message <quoted>
//	path <quoted>           (partial checkpoints: the paths they cover)
//	meta <quoted> <quoted>  (sorted by key)
//
// where <quoted> is a Go-quoted string, which round-trips arbitrary bytes.
type Checkpoint struct {
	Tree    ID
	Parents []ID
	Time    time.Time
	Kind    string
	Branch  string
	Author  string
	Message string
	// Paths lists the paths a partial checkpoint covers; empty for a
	// whole-tree checkpoint.
	Paths []string
	Meta  map[string]string
}

// Partial reports whether c covers only some paths.
func (c *Checkpoint) Partial() bool { return len(c.Paths) > 0 }

// Encode returns the canonical encoding of c.
func (c *Checkpoint) Encode() []byte {
	var b bytes.Buffer
	b.WriteString("ckpt-checkpoint 1\n")
	fmt.Fprintf(&b, "tree %s\n", c.Tree)
	for _, p := range c.Parents {
		fmt.Fprintf(&b, "parent %s\n", p)
	}
	fmt.Fprintf(&b, "time %d\n", c.Time.UnixNano())
	fmt.Fprintf(&b, "kind %s\n", c.Kind)
	fmt.Fprintf(&b, "branch %s\n", strconv.Quote(c.Branch))
	fmt.Fprintf(&b, "author %s\n", strconv.Quote(c.Author))
	fmt.Fprintf(&b, "message %s\n", strconv.Quote(c.Message))
	for _, p := range c.Paths {
		fmt.Fprintf(&b, "path %s\n", strconv.Quote(p))
	}
	keys := make([]string, 0, len(c.Meta))
	for k := range c.Meta {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "meta %s %s\n", strconv.Quote(k), strconv.Quote(c.Meta[k]))
	}
	return b.Bytes()
}

// ID returns the checkpoint's id, the SHA-256 of its encoding.
func (c *Checkpoint) ID() ID { return Sum(c.Encode()) }

// DecodeCheckpoint parses a checkpoint encoding.
func DecodeCheckpoint(data []byte) (*Checkpoint, error) {
	c := &Checkpoint{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, len(data)+1), len(data)+1) // no line is longer than all of it
	line := 0
	seen := map[string]bool{}
	for sc.Scan() {
		line++
		text := sc.Text()
		if line == 1 {
			if text != "ckpt-checkpoint 1" {
				return nil, fmt.Errorf("%w: checkpoint header %q", ErrMalformed, text)
			}
			continue
		}
		key, val, ok := strings.Cut(text, " ")
		if !ok {
			return nil, fmt.Errorf("%w: checkpoint line %d", ErrMalformed, line)
		}
		if key != "parent" && key != "path" && key != "meta" {
			if seen[key] {
				return nil, fmt.Errorf("%w: duplicate %s in checkpoint", ErrMalformed, key)
			}
			seen[key] = true
		}
		var err error
		switch key {
		case "tree":
			c.Tree, err = ParseID(val)
		case "parent":
			var p ID
			p, err = ParseID(val)
			c.Parents = append(c.Parents, p)
		case "time":
			var ns int64
			ns, err = strconv.ParseInt(val, 10, 64)
			c.Time = time.Unix(0, ns).UTC()
		case "kind":
			c.Kind = val
			if !ValidKind(val) {
				err = fmt.Errorf("unknown kind %q", val)
			}
		case "branch":
			c.Branch, err = strconv.Unquote(val)
		case "author":
			c.Author, err = strconv.Unquote(val)
		case "message":
			c.Message, err = strconv.Unquote(val)
		case "path":
			var p string
			p, err = strconv.Unquote(val)
			if err == nil && !ValidPath(p) {
				err = fmt.Errorf("invalid path %q", p)
			}
			c.Paths = append(c.Paths, p)
		case "meta":
			k, v, err2 := unquotePair(val)
			if err2 != nil {
				err = err2
				break
			}
			if c.Meta == nil {
				c.Meta = map[string]string{}
			}
			c.Meta[k] = v
		default:
			err = fmt.Errorf("unknown field %q", key)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: checkpoint line %d: %v", ErrMalformed, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	for _, k := range []string{"tree", "time", "kind", "branch", "author", "message"} {
		if !seen[k] {
			return nil, fmt.Errorf("%w: checkpoint without %s", ErrMalformed, k)
		}
	}
	// Only the canonical encoding is accepted, so one checkpoint has one id.
	if !bytes.Equal(c.Encode(), data) {
		return nil, fmt.Errorf("%w: checkpoint not in canonical form", ErrMalformed)
	}
	return c, nil
}

func unquotePair(s string) (string, string, error) {
	k, err := strconv.QuotedPrefix(s)
	if err != nil {
		return "", "", err
	}
	rest := strings.TrimPrefix(s[len(k):], " ")
	ku, err := strconv.Unquote(k)
	if err != nil {
		return "", "", err
	}
	vu, err := strconv.Unquote(rest)
	return ku, vu, err
}
