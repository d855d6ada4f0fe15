package gitmirror

import (
	"errors"
	"fmt"
	"strings"
)

// CheckRefFormat reports whether name is a valid git ref name, by the rules
// of git check-ref-format (without --allow-onelevel, --refspec-pattern or
// --normalize): at least two '/'-separated components, none empty, none
// starting with '.' or ending in ".lock"; no "..", no "@{", no control
// character, space, '~', '^', ':', '?', '*', '[' or '\'; not ending in
// '.'; not "@". Bytes from 0x80 on are allowed, as in git. The error says
// which rule name breaks.
func CheckRefFormat(name string) error {
	if err := checkRefFormat(name); err != nil {
		return fmt.Errorf("%q is not a valid git ref name: %w", name, err)
	}
	return nil
}

func checkRefFormat(name string) error {
	if name == "@" {
		return errors.New(`it is "@"`)
	}
	comps := strings.Split(name, "/")
	for _, c := range comps {
		switch {
		case c == "":
			return errors.New("it has an empty component (a leading, trailing or double '/')")
		case c[0] == '.':
			return fmt.Errorf("a component starts with \".\" (%q)", c)
		case strings.HasSuffix(c, ".lock"):
			return fmt.Errorf("a component ends in \".lock\" (%q)", c)
		}
		for i := 0; i < len(c); i++ {
			switch ch := c[i]; {
			case ch < 0x20 || ch == 0x7f || strings.IndexByte(" ~^:?*[\\", ch) >= 0:
				return fmt.Errorf("it contains %q", rune(ch))
			case ch == '.' && i > 0 && c[i-1] == '.':
				return errors.New(`it contains ".."`)
			case ch == '{' && i > 0 && c[i-1] == '@':
				return errors.New(`it contains "@{"`)
			}
		}
	}
	switch {
	case strings.HasSuffix(name, "."):
		return errors.New(`it ends with "."`)
	case len(comps) < 2:
		return errors.New("it has only one component")
	}
	return nil
}
