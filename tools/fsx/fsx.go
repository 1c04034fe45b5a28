// Package fsx replaces whole output directories atomically, so an
// interrupted build never leaves a half-written tree behind.
//
// ReplaceDir writes the new tree into a sibling temporary directory and then
// swaps it in with renames, which are atomic within one filesystem (hence
// sibling, not os.TempDir). The swap itself takes two renames; a crash
// between them leaves a backup that CleanStale restores.
package fsx

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

const (
	tmpTag = ".tmp-"
	bakTag = ".bak-"
)

// beforeWrite, when set, runs before the i-th file (0-based, in sorted path
// order) is written; tests use it to inject a failure mid-build.
var beforeWrite func(i int, rel string) error

// tmpPrefix and bakPrefix name the siblings ReplaceDir creates for target;
// the leading dot keeps them out of casual listings.
func tmpPrefix(target string) string { return "." + filepath.Base(target) + tmpTag }
func bakPrefix(target string) string { return "." + filepath.Base(target) + bakTag }

// ReplaceDir makes target a directory holding exactly files, which maps
// slash-separated relative paths to contents (files 0644, directories 0755).
// On any error before the swap, target is left untouched and the temporary
// tree removed. A missing parent of target is created. A target that cannot
// be moved (a mount point, or a directory whose parent is not writable) is
// replaced in place instead, with the same outcome after an interruption
// once CleanStale has run (see replaceInPlace). Callers that may run
// concurrently hold LockTarget.
func ReplaceDir(target string, files map[string][]byte) error {
	target = filepath.Clean(target)
	if err := checkTarget(target); err != nil {
		return err
	}
	names, err := validate(files)
	if err != nil {
		return err
	}
	fi, err := os.Lstat(target)
	switch {
	case err == nil && !fi.IsDir():
		return fmt.Errorf("fsx: %s exists and is not a directory", target)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("fsx: %w", err)
	}
	exists := err == nil
	parent := filepath.Dir(target)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("fsx: creating parent: %w", err)
	}
	if pfi, err := os.Stat(parent); exists && err == nil && isMountPoint(fi, pfi) {
		return inPlace(target, names, files, fmt.Errorf("%s is a mount point", target))
	}
	tmp, err := mkdirTemp(parent, tmpPrefix(target))
	if err != nil {
		if exists && cannotSwap(err) {
			return inPlace(target, names, files, fmt.Errorf("its parent %s is not writable: %w", parent, err))
		}
		if cannotSwap(err) {
			return fmt.Errorf("fsx: cannot create %s: its parent %s is not writable (%w); make it writable or pick another output directory", target, parent, err)
		}
		return fmt.Errorf("fsx: creating temp dir: %w", err)
	}
	if err := build(tmp, names, files); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	err = swap(tmp, target)
	var stuck *stuckError
	if errors.As(err, &stuck) {
		return inPlace(target, names, files, stuck.err)
	}
	return err
}

// inPlace is replaceInPlace for a target that could not be swapped because
// of why; its error says what would make either way work.
func inPlace(target string, names []string, files map[string][]byte, why error) error {
	err := replaceInPlace(target, names, files)
	switch {
	case errors.Is(err, ErrIncomplete):
		return fmt.Errorf("fsx: writing %s in place (%v): %w", target, why, err)
	case err != nil:
		return fmt.Errorf("fsx: %s cannot be swapped by a rename (%v), and writing it in place failed too: %w; make %s writable, or pick another output directory", target, why, err, target)
	}
	return nil
}

// stuckError is swap's error when target itself cannot be moved aside.
type stuckError struct{ err error }

func (e *stuckError) Error() string { return e.err.Error() }

// checkTarget rejects targets without a usable base name, since sibling
// names are derived from it.
func checkTarget(target string) error {
	switch filepath.Base(target) {
	case ".", "..", string(filepath.Separator):
		return fmt.Errorf("fsx: cannot replace directory %q; name it by its own path", target)
	}
	return nil
}

// validate checks every key and returns them sorted. It rejects paths that
// would escape the tree or alias another key, and a file that would also
// have to be a directory.
func validate(files map[string][]byte) ([]string, error) {
	names := make([]string, 0, len(files))
	for name := range files {
		switch {
		case name == "":
			return nil, errors.New("fsx: empty file path")
		case strings.HasPrefix(name, "/") || filepath.IsAbs(name):
			return nil, fmt.Errorf("fsx: absolute file path %q", name)
		case strings.Contains(name, "\\"):
			return nil, fmt.Errorf("fsx: file path %q contains a backslash; use slashes", name)
		}
		for _, seg := range strings.Split(name, "/") {
			switch seg {
			case "":
				return nil, fmt.Errorf("fsx: file path %q has an empty segment", name)
			case ".", "..":
				return nil, fmt.Errorf("fsx: file path %q has a %q segment", name, seg)
			}
		}
		if !filepath.IsLocal(filepath.FromSlash(name)) {
			return nil, fmt.Errorf("fsx: file path %q is not a plain local path", name)
		}
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		for dir := path.Dir(name); dir != "."; dir = path.Dir(dir) {
			if _, ok := files[dir]; ok {
				return nil, fmt.Errorf("fsx: %q is both a file and the directory of %q", dir, name)
			}
		}
	}
	return names, nil
}

func build(root string, names []string, files map[string][]byte) error {
	// MkdirTemp creates 0700; the tree is meant to be readable like any
	// other build output.
	if err := os.Chmod(root, 0o755); err != nil {
		return fmt.Errorf("fsx: %w", err)
	}
	made := map[string]bool{".": true}
	for i, name := range names {
		if err := mkdirs(root, path.Dir(name), made); err != nil {
			return err
		}
		if beforeWrite != nil {
			if err := beforeWrite(i, name); err != nil {
				return fmt.Errorf("fsx: writing %s: %w", name, err)
			}
		}
		if err := writeFile(filepath.Join(root, filepath.FromSlash(name)), files[name]); err != nil {
			return err
		}
	}
	return nil
}

// mkdirs creates dir and its ancestors under root with mode 0755 regardless
// of umask, so the output does not depend on the caller's environment.
func mkdirs(root, dir string, made map[string]bool) error {
	if made[dir] {
		return nil
	}
	if err := mkdirs(root, path.Dir(dir), made); err != nil {
		return err
	}
	p := filepath.Join(root, filepath.FromSlash(dir))
	if err := os.Mkdir(p, 0o755); err != nil {
		return fmt.Errorf("fsx: %w", err)
	}
	if err := os.Chmod(p, 0o755); err != nil {
		return fmt.Errorf("fsx: %w", err)
	}
	made[dir] = true
	return nil
}

func writeFile(p string, data []byte) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("fsx: %w", err)
	}
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Chmod(0o644) // undo umask
	}
	if werr == nil {
		// Sync before the rename: otherwise a crash soon after the swap can
		// leave a complete-looking tree with empty files.
		werr = f.Sync()
	}
	cerr := f.Close()
	if werr != nil {
		return fmt.Errorf("fsx: writing %s: %w", p, werr)
	}
	if cerr != nil {
		return fmt.Errorf("fsx: closing %s: %w", p, cerr)
	}
	return nil
}

// swap moves the finished tmp tree to target, keeping the old target as a
// backup until the new one is in place. A target that cannot be moved is a
// *stuckError, with tmp removed.
func swap(tmp, target string) error {
	bak := filepath.Join(filepath.Dir(target), bakPrefix(target)+strings.TrimPrefix(filepath.Base(tmp), tmpPrefix(target)))
	hadOld := false
	if _, err := os.Lstat(target); err == nil {
		if err := renameDir(target, bak); err != nil {
			os.RemoveAll(tmp)
			if cannotSwap(err) {
				return &stuckError{fmt.Errorf("moving it aside: %w", err)}
			}
			return fmt.Errorf("fsx: moving old %s aside: %w", target, err)
		}
		hadOld = true
	}
	if err := renameDir(tmp, target); err != nil {
		if hadOld {
			if rerr := renameDir(bak, target); rerr != nil {
				return fmt.Errorf("fsx: installing %s: %w (old tree left at %s: %v)", target, err, bak, rerr)
			}
		}
		os.RemoveAll(tmp)
		return fmt.Errorf("fsx: installing %s: %w", target, err)
	}
	syncDir(filepath.Dir(target))
	if hadOld {
		if err := os.RemoveAll(bak); err != nil {
			return fmt.Errorf("fsx: new %s is in place but removing backup: %w", target, err)
		}
	}
	return nil
}

// syncDir persists directory entries (the renames). Best effort: some
// platforms cannot fsync a directory, and the data is already synced.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// ReadTree returns every regular file under dir keyed by slash-separated
// relative path, except fsx's own entries (an in-place write's staging, a
// lock). A missing dir yields an empty map; a symlink or any other
// non-regular entry is an error naming it.
func ReadTree(dir string) (map[string][]byte, error) {
	out := map[string][]byte{}
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("fsx: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("fsx: %s is not a directory", dir)
	}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("fsx: %w", err)
		}
		if filepath.Dir(p) == filepath.Clean(dir) && reserved(d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("fsx: %s is not a regular file (%s)", p, d.Type())
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return fmt.Errorf("fsx: %w", err)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("fsx: %w", err)
		}
		out[filepath.ToSlash(rel)] = data
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// CleanStale removes temporary and backup siblings of target left by an
// interrupted ReplaceDir. If target is missing but a backup exists (a crash
// between the two renames), the backup is restored as target (the most
// recently modified one, should there be several). An interrupted in-place
// write is finished when it was committed and undone when not. Callers that
// may run concurrently hold LockTarget: another writer's temporary tree is
// not stale.
func CleanStale(target string) error {
	target = filepath.Clean(target)
	if err := checkTarget(target); err != nil {
		return err
	}
	parent := filepath.Dir(target)
	entries, err := os.ReadDir(parent)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("fsx: %w", err)
	}
	var tmps, baks []string
	for _, e := range entries {
		switch name := e.Name(); {
		case strings.HasPrefix(name, tmpPrefix(target)):
			tmps = append(tmps, filepath.Join(parent, name))
		case strings.HasPrefix(name, bakPrefix(target)):
			baks = append(baks, filepath.Join(parent, name))
		}
	}
	for _, p := range tmps {
		if err := os.RemoveAll(p); err != nil {
			return fmt.Errorf("fsx: removing stale %s: %w", p, err)
		}
	}
	if _, err := os.Lstat(target); errors.Is(err, fs.ErrNotExist) && len(baks) > 0 {
		newest, newestT := -1, int64(0)
		for i, p := range baks {
			fi, err := os.Lstat(p)
			if err != nil || !fi.IsDir() {
				continue
			}
			if t := fi.ModTime().UnixNano(); newest < 0 || t > newestT {
				newest, newestT = i, t
			}
		}
		if newest >= 0 {
			if err := os.Rename(baks[newest], target); err != nil {
				return fmt.Errorf("fsx: restoring %s from %s: %w", target, baks[newest], err)
			}
			syncDir(parent)
			baks = append(baks[:newest], baks[newest+1:]...)
		}
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("fsx: %w", err)
	}
	for _, p := range baks {
		if err := os.RemoveAll(p); err != nil {
			return fmt.Errorf("fsx: removing stale %s: %w", p, err)
		}
	}
	return cleanStaging(target)
}

// StaleAge is how old a build directory must be before RemoveStale takes
// it for the leftover of a killed process: far longer than any compile.
const StaleAge = time.Hour

// RemoveStale removes the directories in dir whose names start with prefix
// and that nothing has touched for StaleAge: work directories of builds
// killed before they could clean up (SIGKILL, a crash, a power cut). A
// live build touches its own when it writes into it. Errors are ignored:
// the next call tries again.
func RemoveStale(dir, prefix string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > StaleAge {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}
