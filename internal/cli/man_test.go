package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"
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

// The title line quotes its fields as roff does: a quote in the version
// (a build's "(devel)" or a vendor's string) must not end the field or
// start a comment.
func TestManTitleQuoting(t *testing.T) {
	page := string(manPage(newRootCmd(&env{}), time.Date(2023, 11, 14, 0, 0, 0, 0, time.UTC), `ckpt 1.0 "x" \y`))
	want := `.TH "CKPT" "1" "Nov 2023" "ckpt 1.0 \(dqx\(dq \ey" "ckpt manual"`
	if !strings.Contains(page, want+"\n") {
		t.Errorf("title line: %q\nwant %q", strings.SplitN(page, "\n", 3)[1], want)
	}
}
