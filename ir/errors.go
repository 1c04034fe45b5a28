package ir

import (
	"fmt"
	"strings"
)

// Error is a problem found in a kernel, located at the DSL line that caused it.
type Error struct {
	Pos Pos
	Msg string
}

func (e *Error) Error() string { return e.Pos.String() + ": " + e.Msg }

// ErrorList is every problem found, in the order found.
type ErrorList []*Error

func (l ErrorList) Error() string {
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Err returns l as an error, or nil when empty.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

func (l *ErrorList) add(p Pos, format string, args ...any) {
	*l = append(*l, &Error{Pos: p, Msg: fmt.Sprintf(format, args...)})
}
