// Package testhook lets a test hold a kernelgen process at a named step
// (the tree locked, the files staged, the renames begun), so that it can
// signal it, or start a second one, at exactly that point instead of after
// a guessed sleep. Outside tests no hook is set and Pause does nothing.
package testhook

import (
	"context"
	"sync/atomic"
)

var hook atomic.Pointer[func(ctx context.Context, step string)]

// Set installs f, which Pause calls with each step; nil removes it.
func Set(f func(ctx context.Context, step string)) {
	if f == nil {
		hook.Store(nil)
		return
	}
	hook.Store(&f)
}

// Pause calls the installed hook, which may block until ctx ends or the
// test releases it.
func Pause(ctx context.Context, step string) {
	if f := hook.Load(); f != nil {
		(*f)(ctx, step)
	}
}
