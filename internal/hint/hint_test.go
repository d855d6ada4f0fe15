package hint

import (
	"errors"
	"fmt"
	"testing"
)

func TestWithAndOf(t *testing.T) {
	base := errors.New("base")
	err := fmt.Errorf("op: %w", With(base, "try again"))
	if got := Of(err); got != "try again" {
		t.Errorf("Of = %q, want %q", got, "try again")
	}
	if !errors.Is(err, base) {
		t.Error("the hinted error does not wrap its cause")
	}
	if Of(base) != "" || Of(nil) != "" || With(nil, "x") != nil {
		t.Error("an error without a hint has one")
	}
}
