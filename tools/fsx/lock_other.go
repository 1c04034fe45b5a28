//go:build !unix

package fsx

import (
	"errors"
	"io/fs"
	"os"
)

// tryLock: without flock, no lock is taken on this platform; concurrent
// builds into one directory are not ordered here (see LockTarget).
func tryLock(*os.File, bool) error { return nil }

func isReadOnly(error) bool { return false }

func isMountPoint(os.FileInfo, os.FileInfo) bool { return false }

func cannotSwap(err error) bool { return errors.Is(err, fs.ErrPermission) }
