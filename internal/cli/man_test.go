package cli

import (
	"bytes"
	"testing"
)

// Help text becomes roff that man shows as written: a line starting with
// a period or an apostrophe is text, not a request; backslashes and
// hyphens are escaped; indented lines are kept unfilled.
func TestManRoff(t *testing.T) {
	for in, want := range map[string]string{
		".ckptignore lists": `\&.ckptignore lists`,
		"'quoted'":          `\&'quoted'`,
		`a\b --flag`:        `a\eb \-\-flag`,
		"the store — kept":  `the store \[u2014] kept`,
	} {
		if got := roffLine(in); got != want {
			t.Errorf("roffLine(%q) = %q, want %q", in, got, want)
		}
	}
	var b bytes.Buffer
	roffText(&b, "One line\nfilled.\n\n  ckpt save\n  ckpt undo\nAfter.\n")
	want := ".PP\nOne line\nfilled.\n.PP\n.RS\n.nf\nckpt save\nckpt undo\n.fi\n.RE\n.PP\nAfter.\n"
	if b.String() != want {
		t.Errorf("roffText:\n%s\nwant:\n%s", b.String(), want)
	}
}
