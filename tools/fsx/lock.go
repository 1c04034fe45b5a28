package fsx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Lock is a held lock on an output directory (see LockTarget).
type Lock struct {
	f    *os.File
	path string
}

// LockTimeout bounds how long LockTarget waits for another holder. Writers
// hold the lock only while they compose and write a tree (a second or two,
// never during compilation), so a longer wait means a stuck process.
var LockTimeout = 2 * time.Minute

// lockPoll is how often a waiter tries again.
var lockPoll = 25 * time.Millisecond

// errLocked is tryLock's answer when another open file holds the lock.
var errLocked = errors.New("locked")

// lockName is the lock file of a target whose parent is not writable; it
// lives inside the target, where ReadTree does not see it.
const lockName = ".kernelgen-lock"

// LockPath is where LockTarget keeps target's lock: <parent>/.<base>.lock,
// or, when the parent cannot hold it, <target>/.kernelgen-lock.
func LockPath(target string) string {
	target = filepath.Clean(target)
	return filepath.Join(filepath.Dir(target), "."+filepath.Base(target)+".lock")
}

// LockedError is LockTarget's error when another process held the lock
// for longer than LockTimeout.
type LockedError struct {
	Target, LockFile, Holder string
	Waited                   time.Duration
}

func (e *LockedError) Error() string {
	who := "another kernelgen"
	if e.Holder != "" {
		who += " (pid " + e.Holder + ")"
	}
	return fmt.Sprintf("%s has been writing %s for over %v (it holds %s); wait for it to finish or stop it, then run again", who, e.Target, e.Waited, e.LockFile)
}

// LockTarget takes the lock that orders every kernelgen reading or writing
// target: exclusive for a writer, which holds it from CleanStale through
// ReplaceDir, so two builds into one directory run one after the other and
// each composes from the tree the other left; shared for a reader such as
// --check, which then never reads a tree halfway through a swap. It is an
// flock(2) on a lock file (Linux, macOS and the BSDs; elsewhere no lock is
// taken), released by the kernel when a process dies, so a crash never
// leaves a stale lock. The last holder to release removes the file.
//
// While another process holds the lock, LockTarget calls waiting once (the
// lock file and the holder's pid, "" when unknown) and polls until it gets
// the lock, ctx ends or LockTimeout passes. A reader gets a nil *Lock (whose
// Unlock does nothing) when there is nothing to read or nowhere to put a
// lock file: no one can be writing there either.
func LockTarget(ctx context.Context, target string, exclusive bool, waiting func(lockFile, holder string)) (*Lock, error) {
	target = filepath.Clean(target)
	if err := checkTarget(target); err != nil {
		return nil, err
	}
	if exclusive {
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return nil, fmt.Errorf("fsx: creating the parent of %s: %w", target, err)
		}
	}
	open := func() (*os.File, string, error) {
		f, path, err := openLock(target)
		if err != nil {
			err = &lockFileError{fmt.Sprintf("its lock file can be created neither beside it (%s) nor in it", LockPath(target)), err}
		}
		return f, path, err
	}
	return lock(ctx, target, open, exclusive, waiting)
}

// LockFile is LockTarget with the lock file named by the caller, for a
// target whose lock belongs elsewhere (a git work tree's, in its git
// directory, where git status does not see it). The file's directory must
// exist; a reader that cannot create the file gets a nil *Lock.
func LockFile(ctx context.Context, target, lockFile string, exclusive bool, waiting func(lockFile, holder string)) (*Lock, error) {
	open := func() (*os.File, string, error) {
		f, err := os.OpenFile(lockFile, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, "", &lockFileError{"its lock file " + lockFile + " cannot be created", err}
		}
		return f, lockFile, nil
	}
	return lock(ctx, target, open, exclusive, waiting)
}

// lock takes the lock on the file open returns, as LockTarget describes.
func lock(ctx context.Context, target string, open func() (*os.File, string, error), exclusive bool, waiting func(lockFile, holder string)) (*Lock, error) {
	start := time.Now()
	warned := false
	for {
		f, path, err := open()
		if err != nil {
			if !exclusive && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) || isReadOnly(err)) {
				return nil, nil
			}
			return nil, fmt.Errorf("fsx: cannot write %s: %w; make it writable or pick another output directory", target, err)
		}
		err = tryLock(f, exclusive)
		if err == nil {
			if same, serr := samePath(f, path); serr != nil || !same {
				// The last holder removed the file after we opened it: take
				// the new one.
				f.Close()
				continue
			}
			if exclusive {
				// The holder's pid, for the message of whoever waits.
				if f.Truncate(0) == nil {
					f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
				}
			}
			return &Lock{f: f, path: path}, nil
		}
		holder := ""
		if !errors.Is(err, errLocked) {
			f.Close()
			return nil, fmt.Errorf("fsx: locking %s: %w", path, err)
		}
		var buf [32]byte
		if n, _ := f.ReadAt(buf[:], 0); n > 0 {
			holder = string(bytes.TrimSpace(buf[:n]))
		}
		f.Close()
		if !warned && waiting != nil {
			waiting(path, holder)
			warned = true
		}
		if waited := time.Since(start); waited > LockTimeout {
			return nil, &LockedError{Target: target, LockFile: path, Holder: holder, Waited: LockTimeout}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(lockPoll):
		}
	}
}

// lockFileError says where a lock file could not be created.
type lockFileError struct {
	where string
	err   error
}

func (e *lockFileError) Error() string { return e.where + ": " + e.err.Error() }
func (e *lockFileError) Unwrap() error { return e.err }

// openLock opens (creating) target's lock file beside it, or inside it when
// its parent is not writable.
func openLock(target string) (*os.File, string, error) {
	path := LockPath(target)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err == nil {
		return f, path, nil
	}
	if !errors.Is(err, fs.ErrPermission) && !isReadOnly(err) {
		return nil, "", err
	}
	inside := filepath.Join(target, lockName)
	f, ierr := os.OpenFile(inside, os.O_RDWR|os.O_CREATE, 0o644)
	if ierr != nil {
		return nil, "", err // the parent's error says what is needed
	}
	return f, inside, nil
}

// samePath reports whether path still names the open file f.
func samePath(f *os.File, path string) (bool, error) {
	a, err := f.Stat()
	if err != nil {
		return false, err
	}
	b, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return os.SameFile(a, b), nil
}

// Unlock releases the lock; the last holder removes the lock file. A nil
// Lock is a no-op.
func (l *Lock) Unlock() error {
	if l == nil {
		return nil
	}
	// Only a holder that can have the lock to itself may remove the file:
	// anyone still waiting on it then sees it gone and opens a new one.
	if tryLock(l.f, true) == nil {
		if same, err := samePath(l.f, l.path); err == nil && same {
			os.Remove(l.path)
		}
	}
	return l.f.Close()
}
