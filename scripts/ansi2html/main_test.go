package main

import "testing"

func TestConvert(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain <text>", "plain &lt;text&gt;"},
		{"\x1b[1mckpt\x1b[0m rest", `<span style="font-weight:bold">ckpt</span> rest`},
		{"\x1b[32mcreate\x1b[39m a", `<span style="color:#a6e3a1">create</span> a`},
		{"\x1b[38;5;196mx\x1b[m", `<span style="color:#ff0000">x</span>`},
		{"\x1b[38;2;1;2;3mx", `<span style="color:#010203">x</span>`},
		{"\x1b[7mx", `<span style="color:#1e1e2e;background:#cdd6f4">x</span>`},
		{"\x1b[2mdim\x1b[22m\x1b[?25lno", `<span style="opacity:0.6">dim</span>no`},
	} {
		if got := convert(c.in); got != c.want {
			t.Errorf("convert(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
