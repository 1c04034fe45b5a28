package patch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/kernelgen/kernelgen/tools/fsx"
)

// Tree is a ggml or llama.cpp checkout.
type Tree struct {
	Root string // the directory the user named
	// GGML is where the ggml tree starts below Root: "" for a ggml
	// checkout, "ggml/" for llama.cpp.
	GGML string
	Kind string // "ggml" or "llama.cpp"
	// OnWait, when set, is called once when another kernelgen holds the
	// tree's lock: the lock file and the holder's pid ("" when unknown).
	OnWait func(lockFile, holder string)
}

// LockName is the tree's lock file in its git directory, beside git's own
// index.lock: git status does not see it there, so the lock does not make
// the tree dirty.
const LockName = "kernelgen.lock"

// lock takes the tree's lock, exclusive to write and shared to read, so
// two kernelgen runs on one tree take turns (a second apply then finds the
// patch in place) and a check never reads a tree halfway through an
// apply. The lock is in the tree's git directory; a tree outside git
// (which apply refuses unless it already holds the patch) has it beside
// the tree, as build's output directory does. A holder that dies releases
// it (see fsx.LockTarget); one that stays past fsx.LockTimeout is named
// with its lock file.
func (t *Tree) lock(ctx context.Context, exclusive bool) (*fsx.Lock, error) {
	var l *fsx.Lock
	var err error
	if file, ok := t.lockFile(); ok {
		l, err = fsx.LockFile(ctx, t.Root, file, exclusive, t.OnWait)
	} else {
		l, err = fsx.LockTarget(ctx, t.Root, exclusive, t.OnWait)
	}
	if ctx.Err() != nil {
		l.Unlock()
		if err != nil {
			return nil, fmt.Errorf("%w while waiting for the lock on %s: nothing was changed", context.Cause(ctx), t.Root)
		}
		return nil, fmt.Errorf("%w: nothing was changed", context.Cause(ctx))
	}
	return l, err
}

// lockFile is where the tree's lock lives in its git directory; false when
// git does not know the tree.
func (t *Tree) lockFile() (string, bool) {
	out, err := git(t.Root, nil, "rev-parse", "--git-path", LockName)
	if err != nil {
		return "", false
	}
	file := strings.TrimSpace(out)
	if !filepath.IsAbs(file) {
		file = filepath.Join(t.Root, file)
	}
	return file, true
}

// Open recognises root as a ggml tree (src/ggml.c) or a llama.cpp tree
// (ggml/src/ggml.c plus src/llama-context.cpp).
func Open(root string) (*Tree, error) {
	fi, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("--tree %s: %w", root, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("--tree %s: not a directory", root)
	}
	switch {
	case isFile(filepath.Join(root, "src", "ggml.c")):
		return &Tree{Root: root, Kind: "ggml"}, nil
	case isFile(filepath.Join(root, "ggml", "src", "ggml.c")):
		return &Tree{Root: root, GGML: "ggml/", Kind: "llama.cpp"}, nil
	}
	return nil, fmt.Errorf("--tree %s: neither a ggml tree (no src/ggml.c) nor a llama.cpp tree (no ggml/src/ggml.c): point --tree at the repository root", root)
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// path maps a path of an edit to a path below Root. Paths of ggml files are
// relative to the ggml root; llama.cpp's own files start with "llama:". The
// second result is false for a llama.cpp file on a ggml tree.
func (t *Tree) path(p string) (string, bool) {
	if rest, ok := strings.CutPrefix(p, "llama:"); ok {
		return rest, t.Kind == "llama.cpp"
	}
	for _, d := range atLlamaRoot {
		if strings.HasPrefix(p, d) {
			return p, true
		}
	}
	return t.GGML + p, true
}

// atLlamaRoot are the ggml directories whose files a llama.cpp tree keeps at
// its root rather than below ggml/: ggml's tests are llama.cpp's tests/.
var atLlamaRoot = []string{"tests/"}

// notFound says where the tree was expected to hold a file it lacks.
func (t *Tree) notFound(rel string) string {
	return fmt.Sprintf("file not found: a %s tree has it at %s", t.Kind, rel)
}

func (t *Tree) read(rel string) (string, bool, error) {
	b, err := os.ReadFile(filepath.Join(t.Root, filepath.FromSlash(rel)))
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return string(b), true, nil
}

// readGGML reads a file by its path below the ggml root (integration.ReadFile).
func (t *Tree) readGGML(file string) (string, bool, error) {
	rel, ok := t.path(file)
	if !ok {
		return "", false, nil
	}
	return t.read(rel)
}

var errNoGit = errors.New("git not found: install git (Debian: apt-get install git)")

// git runs git in dir, for the user's tree (their configuration applies),
// and returns its standard output.
func git(dir string, env []string, args ...string) (string, error) {
	return runGit(context.Background(), dir, append(os.Environ(), env...), args...)
}

// ownedGit runs git for what kernelgen owns, the series' clone, its commits
// and format-patch, with none of the user's git configuration: no global
// or system file, no GIT_* variable (a hook's GIT_DIR, an alias's
// GIT_CONFIG_PARAMETERS), no hooks. What it needs, the identity and the
// dates, comes in env. It stops when ctx ends.
func ownedGit(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	var base []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			base = append(base, kv)
		}
	}
	base = append(base, "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1")
	args = append([]string{"-c", "core.hooksPath=" + os.DevNull}, args...)
	return runGit(ctx, dir, append(base, env...), args...)
}

func runGit(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(env, "LC_ALL=C", "GIT_TERMINAL_PROMPT=0")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return "", errNoGit
		}
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// dirty lists the tree's uncommitted changes (untracked files included,
// ignored ones not), or says why it cannot tell.
func (t *Tree) dirty() ([]string, error) {
	if _, err := git(t.Root, nil, "rev-parse", "--show-toplevel"); err != nil {
		if errors.Is(err, errNoGit) {
			return nil, err
		}
		if m := dubious.FindStringSubmatch(err.Error()); m != nil {
			return nil, fmt.Errorf("--tree %s: git refuses to work in the repository %s because another user owns it (git's safe.directory check), so kernelgen cannot check that it is clean; if you trust it, run: git config --global --add safe.directory %s (or run kernelgen as its owner)", t.Root, m[1], m[1])
		}
		return nil, fmt.Errorf("--tree %s is not a git work tree, so kernelgen cannot check that it is clean (commit it first: git init && git add -A && git commit)", t.Root)
	}
	out, err := git(t.Root, nil, "status", "--porcelain", "--untracked-files=normal", "--", ".")
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	return lines, nil
}

// dubious matches git's refusal of a repository another user owns and
// captures the path it names (what safe.directory must list).
var dubious = regexp.MustCompile(`detected dubious ownership in repository at '([^']*)'`)

// Rel is where a change's path lies below Root.
func (t *Tree) Rel(p string) string {
	rel, _ := t.path(p)
	return rel
}

// cached reads rel through contents, the texts already read.
func (t *Tree) cached(contents map[string]string, rel string) (string, bool, error) {
	if src, ok := contents[rel]; ok {
		return src, true, nil
	}
	src, found, err := t.read(rel)
	if found {
		contents[rel] = src
	}
	return src, found, err
}

// holds says whether the tree's file holds the probe's text (a missing file
// does not), and if not, why.
func (t *Tree) holds(contents map[string]string, p Probe) (bool, string, error) {
	rel, ok := t.path(p.File)
	if !ok {
		return false, fmt.Sprintf("%s is a llama.cpp file", p.File), nil
	}
	src, found, err := t.cached(contents, rel)
	switch {
	case err != nil:
		return false, "", err
	case !found:
		return false, fmt.Sprintf("the tree has no %s", rel), nil
	case !strings.Contains(src, p.Text):
		return false, fmt.Sprintf("%s has no %q", rel, p.Text), nil
	}
	return true, fmt.Sprintf("%s has %q", rel, p.Text), nil
}

// targets maps each path below Root to the file a write of it replaces.
// A symbolic link is followed, as git follows none but a user's tree may
// hold them: the file it leads to is written and the link stays a link.
// A link that leads out of the tree, or nowhere, and two paths that lead
// to one file are problems, named.
func (t *Tree) targets(rels []string) (map[string]string, []string, error) {
	root, err := filepath.EvalSymlinks(t.Root)
	if err != nil {
		return nil, nil, err
	}
	out := map[string]string{}
	var problems []string
	by := map[string]string{} // resolved file -> the path that leads to it
	for _, rel := range rels {
		full := filepath.Join(t.Root, filepath.FromSlash(rel))
		real, err := resolve(full)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v: kernelgen does not write through a broken link; restore it (git checkout) or make it a file", rel, err))
			continue
		}
		in, err := filepath.Rel(root, real)
		if err != nil || in == ".." || strings.HasPrefix(in, ".."+string(filepath.Separator)) || filepath.IsAbs(in) {
			problems = append(problems, fmt.Sprintf("%s: a symbolic link to %s, outside the tree: kernelgen writes only inside %s; make the link a file, or patch the tree it points into", rel, real, t.Root))
			continue
		}
		if other, ok := by[real]; ok {
			problems = append(problems, fmt.Sprintf("%s and %s are one file (through a symbolic link): both would be patched; make one of them a file", other, rel))
			continue
		}
		by[real] = rel
		out[rel] = full
		if in != filepath.FromSlash(rel) {
			out[rel] = filepath.Join(root, in)
		}
	}
	return out, problems, nil
}

// resolve follows the symbolic links of full, or, for a file still to be
// made, of its nearest existing directory.
func resolve(full string) (string, error) {
	if fi, err := os.Lstat(full); err == nil {
		real, err := filepath.EvalSymlinks(full)
		if err != nil && fi.Mode()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(full)
			return "", fmt.Errorf("a symbolic link to %s, which does not exist", target)
		}
		return real, err
	}
	dir, rest := filepath.Dir(full), filepath.Base(full)
	for {
		if _, err := os.Lstat(dir); err == nil {
			real, err := filepath.EvalSymlinks(dir)
			return filepath.Join(real, rest), err
		}
		if parent := filepath.Dir(dir); parent != dir {
			dir, rest = parent, filepath.Join(filepath.Base(dir), rest)
			continue
		}
		return full, nil
	}
}
