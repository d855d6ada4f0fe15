package object

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/seed1cedbf7c/ckpt/internal/diff"
)

// Path is a workspace-relative, slash-separated path. Paths are arbitrary
// bytes; in JSON a path is written as itself when it is valid UTF-8 and does
// not begin with a double quote, and otherwise in git's C-quoted form
// including the surrounding double quotes (e.g. "\"caf\\351\"" for the
// Latin-1 name caf\xe9). Readers unquote strings that begin with a double
// quote, so every name round-trips.
type Path string

// MarshalJSON implements json.Marshaler.
func (p Path) MarshalJSON() ([]byte, error) { return json.Marshal(EncodePath(string(p))) }

// UnmarshalJSON implements json.Unmarshaler.
func (p *Path) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := diff.UnquotePath(s)
	if err != nil {
		return err
	}
	*p = Path(v)
	return nil
}

// EncodePath returns the text form of a path used in JSON (see [Path]).
func EncodePath(p string) string {
	if utf8.ValidString(p) && !strings.HasPrefix(p, `"`) {
		return p
	}
	return diff.QuotePath(p)
}
