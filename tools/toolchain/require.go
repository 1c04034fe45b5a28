package toolchain

import (
	"context"
	"fmt"
)

// MissingError reports a needed tool that is absent, with what it is for
// and how to install it, so the user can act on the message alone.
type MissingError struct {
	Tool Tool
	// Reason is Probe's explanation (not on PATH, too old, macOS-only).
	Reason error
}

func (e *MissingError) Error() string {
	msg := fmt.Sprintf("%s is needed (%s) but missing", e.Tool.Name, e.Tool.Purpose)
	if e.Reason != nil {
		msg += ": " + e.Reason.Error()
	}
	return msg + "; install: " + e.Tool.Install
}

func (e *MissingError) Unwrap() error { return e.Reason }

// Require probes t and returns a *MissingError when it is
// absent. A tool that is present but failed its version check is an error
// too, since it is unlikely to work for real use.
func Require(ctx context.Context, t Tool) (Result, error) {
	r := Probe(ctx, t)
	if !r.Found {
		return r, &MissingError{Tool: t, Reason: r.Err}
	}
	if r.Err != nil {
		return r, fmt.Errorf("%s at %s is broken: %w", t.Name, r.Path, r.Err)
	}
	return r, nil
}
