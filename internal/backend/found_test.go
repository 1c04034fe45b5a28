package backend

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// Found's three cases: the probe failed, found nothing, or found items.
func TestFound(t *testing.T) {
	value := func(items []string, why string) any { return [2]any{items, why} }
	lines := func(s string) []string { return []string{"thing: " + s, "  more of " + s} }
	for _, c := range []struct {
		items []string
		err   error
		value any
		lines string
	}{
		{nil, errors.New("no loader"), [2]any{[]string{}, "no loader"}, "Things: not listed (no loader)"},
		{[]string{}, nil, [2]any{[]string{}, ""}, "Things: none found (install one)"},
		{[]string{"a", "b"}, nil, [2]any{[]string{"a", "b"}, ""}, "thing: a\n  more of a\nthing: b\n  more of b"},
	} {
		f := Found("things", "Things", "install one", c.items, c.err, value, lines)
		if f.Key != "things" || !reflect.DeepEqual(f.Value, c.value) || strings.Join(f.Lines, "\n") != c.lines {
			t.Errorf("Found(%v, %v) = %+v, want value %v and lines %q", c.items, c.err, f, c.value, c.lines)
		}
	}
}
