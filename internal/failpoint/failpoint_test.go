package failpoint

import (
	"errors"
	"testing"
)

func TestSetAndDisarm(t *testing.T) {
	if err := Hit("x/y", "a"); err != nil {
		t.Fatalf("unarmed: %v", err)
	}
	var got []string
	disarm := Set("x/y(b)", func(arg string) error { got = append(got, arg); return ErrInjected })
	if err := Hit("x/y", "a"); err != nil {
		t.Fatalf("filtered out: %v", err)
	}
	if err := Hit("x/y", "b"); !errors.Is(err, ErrInjected) {
		t.Fatalf("armed: got %v", err)
	}
	disarm()
	if err := Hit("x/y", "b"); err != nil || Enabled() {
		t.Fatalf("disarmed: %v, enabled %v", err, Enabled())
	}
	if len(got) != 1 || got[0] != "b" {
		t.Fatalf("calls %q", got)
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		spec, name string
		bad        bool
	}{
		{"restore-kill:0", "restore/before-change", false},
		{"restore-fail:3", "restore/change", false},
		{"scan/read-dir(d)=pause", "scan/read-dir(d)", false},
		{"a=fail@2", "a", false},
		{"a=explode", "", true},
		{"a=fail@0", "", true},
		{"nothing", "", true},
	} {
		name, fn, err := parse(tc.spec)
		if (err != nil) != tc.bad || name != tc.name || (!tc.bad && fn == nil) {
			t.Errorf("parse(%q) = %q, %v", tc.spec, name, err)
		}
	}
	_, fn, _ := parse("a=fail@2")
	if fn("") != nil || !errors.Is(fn(""), ErrInjected) || fn("") != nil {
		t.Error("fail@2 does not fail exactly the second hit")
	}
}
