//go:build unix

package fsx

import (
	"errors"
	"os"
	"syscall"
)

// tryLock takes an flock on f without waiting: errLocked when another open
// file holds a conflicting one. Taking the other kind converts the lock.
func tryLock(f *os.File, exclusive bool) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EWOULDBLOCK):
			return errLocked
		case errors.Is(err, syscall.EINTR):
			continue
		}
		return err
	}
}

func isReadOnly(err error) bool { return errors.Is(err, syscall.EROFS) }

// isMountPoint reports whether dir is on another device than its parent.
func isMountPoint(dir os.FileInfo, parent os.FileInfo) bool {
	a, ok1 := dir.Sys().(*syscall.Stat_t)
	b, ok2 := parent.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && a.Dev != b.Dev
}

// cannotSwap reports whether a rename of a directory failed because the
// directory cannot be moved: a mount point (EBUSY), another file system
// (EXDEV), or a parent it cannot be moved out of.
func cannotSwap(err error) bool {
	return errors.Is(err, syscall.EBUSY) || errors.Is(err, syscall.EXDEV) ||
		errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EROFS)
}
