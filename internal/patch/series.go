package patch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/mail"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kernelgen/kernelgen/tools/testhook"
)

// Series writes steps as a git format-patch series into out, a directory
// that must not exist yet (or be empty). The tree is not touched: the steps
// are applied and committed one by one in a shared clone of its HEAD.
// Commits carry HEAD's date and the user's identity (user.name and
// user.email as git reads them for the tree), so the same tree and the same
// kernelgen give the same series; nothing else of the user's git
// configuration reaches the clone or format-patch (see ownedGit). The clone
// and the series are made in a temporary directory beside out, and the
// series is renamed into place whole, so an interrupted or failed run
// leaves neither a partial series nor the temporary directory. It returns
// the patch file names.
func Series(ctx context.Context, t *Tree, steps []*Step, out string) ([]string, error) {
	return SeriesBy(ctx, t, steps, out, "")
}

// SeriesBy is Series with the commits' author given as "Name <email>" (the
// user's identity stays the committer); an empty author is Series.
func SeriesBy(ctx context.Context, t *Tree, steps []*Step, out, author string) ([]string, error) {
	var by *mail.Address
	if strings.TrimSpace(author) != "" {
		a, err := mail.ParseAddress(author)
		if err != nil || a.Name == "" {
			return nil, fmt.Errorf("--author %q: want \"Name <email>\"", author)
		}
		by = a
	}
	if strings.TrimSpace(out) == "" {
		return nil, errors.New("--series is empty: name the directory to write the series into")
	}
	// The series is made in scratch trees with other working directories:
	// a relative OUT names the directory it names here.
	out, err := filepath.Abs(out)
	if err != nil {
		return nil, fmt.Errorf("--series %s: %w", out, err)
	}
	if err := emptyOrAbsent(out); err != nil {
		return nil, err
	}
	l, err := t.lock(ctx, false)
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	steps, err = expand(t, steps)
	if err != nil {
		return nil, err
	}
	dirty, err := t.dirty()
	if err != nil {
		return nil, err
	}
	if len(dirty) > 0 {
		return nil, fmt.Errorf("refusing to write a series from %s: the tree has uncommitted changes, and the series is made from HEAD (commit or stash them first)", t.Root)
	}
	head, env, err := seriesBase(t)
	if err != nil {
		return nil, err
	}
	if by != nil {
		env = append(env, "GIT_AUTHOR_NAME="+by.Name, "GIT_AUTHOR_EMAIL="+by.Address)
	}
	parent := filepath.Dir(filepath.Clean(out))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("--series %s: %w", out, err)
	}
	work, err := os.MkdirTemp(parent, "."+filepath.Base(filepath.Clean(out))+".kernelgen-")
	if err != nil {
		return nil, fmt.Errorf("--series %s: %w", out, err)
	}
	defer os.RemoveAll(work)
	stage := filepath.Join(work, "series")
	commits, err := commitSteps(ctx, t, steps, work, head, env)
	if err != nil {
		return nil, err
	}
	if commits == 0 {
		return nil, fmt.Errorf("%s already holds every change: the series would be empty", t.Root)
	}
	clone := filepath.Join(work, "tree")
	if _, err := ownedGit(ctx, clone, env, "format-patch", "-q", "--no-signature", "--no-cover-letter", "--suffix=.patch", "--numbered", "-o", stage, head+"..HEAD"); err != nil {
		return nil, interrupted(ctx, err)
	}
	names, err := patchNames(stage, commits)
	if err != nil {
		return nil, err
	}
	testhook.Pause(ctx, "series-staged")
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%w: nothing was written", context.Cause(ctx))
	}
	// An empty out (checked above) goes, so the rename can take its place.
	if err := os.Remove(out); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("--series %s: %w", out, err)
	}
	if err := os.Rename(stage, out); err != nil {
		return nil, fmt.Errorf("--series %s: %w", out, err)
	}
	var written []string
	for _, n := range names {
		written = append(written, filepath.Join(out, n))
	}
	return written, nil
}

// emptyOrAbsent refuses an out that holds something.
func emptyOrAbsent(out string) error {
	fi, err := os.Stat(out)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("--series %s: %w", out, err)
	case !fi.IsDir():
		return fmt.Errorf("--series %s: a file of that name exists; name a new directory", out)
	}
	if entries, err := os.ReadDir(out); err != nil {
		return fmt.Errorf("--series %s: %w", out, err)
	} else if len(entries) > 0 {
		return fmt.Errorf("--series %s: the directory exists and is not empty; name a new directory", out)
	}
	return nil
}

// seriesBase is the tree's HEAD and the environment of the series'
// commits: HEAD's date, and the user's identity when git has one for the
// tree, a placeholder otherwise.
func seriesBase(t *Tree) (string, []string, error) {
	head, err := git(t.Root, nil, "rev-parse", "HEAD")
	if err != nil {
		return "", nil, err
	}
	date, err := git(t.Root, nil, "log", "-1", "--format=%cI", "HEAD")
	if err != nil {
		return "", nil, err
	}
	env := []string{"GIT_AUTHOR_DATE=" + strings.TrimSpace(date), "GIT_COMMITTER_DATE=" + strings.TrimSpace(date)}
	for _, k := range []struct{ key, envName, envMail, def string }{
		{"user.name", "GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME", "kernelgen"},
		{"user.email", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL", "kernelgen@localhost"},
	} {
		v, err := git(t.Root, nil, "config", k.key)
		v = strings.TrimSpace(v)
		if err != nil || v == "" {
			v = k.def
		}
		env = append(env, k.envName+"="+v, k.envMail+"="+v)
	}
	return strings.TrimSpace(head), env, nil
}

// commitSteps clones t's HEAD into work/tree and commits each step that
// changes it there; it returns how many did.
func commitSteps(ctx context.Context, t *Tree, steps []*Step, work, head string, env []string) (int, error) {
	clone := filepath.Join(work, "tree")
	from, err := filepath.Abs(t.Root) // git runs in work, not where --tree was given
	if err != nil {
		return 0, err
	}
	if _, err := ownedGit(ctx, work, nil, "clone", "-q", "--shared", "--no-checkout", from, clone); err != nil {
		return 0, interrupted(ctx, err)
	}
	if _, err := ownedGit(ctx, clone, nil, "checkout", "-q", "--detach", head); err != nil {
		return 0, interrupted(ctx, err)
	}
	ct := &Tree{Root: clone, GGML: t.GGML, Kind: t.Kind}
	commits := 0
	for _, s := range steps {
		o, err := apply(ctx, ct, []*Step{s})
		if err != nil {
			return 0, fmt.Errorf("%s: %w", s.Backend, ofUsersTree(interrupted(ctx, err), t, clone))
		}
		if len(o.Written) == 0 {
			continue // nothing of this step applies to this tree (or HEAD already holds it)
		}
		if _, err := ownedGit(ctx, clone, env, "add", "-A"); err != nil {
			return 0, interrupted(ctx, err)
		}
		msg := filepath.Join(work, "msg")
		if err := os.WriteFile(msg, []byte(s.Subject+"\n\n"+s.Body), 0o644); err != nil {
			return 0, err
		}
		if _, err := ownedGit(ctx, clone, env, "commit", "-q", "--no-verify", "--cleanup=whitespace", "-F", msg); err != nil {
			return 0, interrupted(ctx, err)
		}
		commits++
	}
	return commits, nil
}

// patchNames lists the series format-patch wrote into stage, which must be
// one .patch file per commit.
func patchNames(stage string, commits int) ([]string, error) {
	entries, err := os.ReadDir(stage)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	if len(names) != commits {
		return nil, fmt.Errorf("git format-patch wrote %d files for %d commits (%s): a kernelgen bug, please report it", len(names), commits, strings.Join(names, ", "))
	}
	for _, n := range names {
		if !strings.HasSuffix(n, ".patch") {
			return nil, fmt.Errorf("git format-patch wrote %s, not a .patch file: a kernelgen bug, please report it", n)
		}
	}
	return names, nil
}

// interrupted restates err as the interruption that caused it, when ctx
// ended: a git child killed by the context fails with "signal: killed".
func interrupted(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w: nothing was written", context.Cause(ctx))
	}
	return err
}

// ofUsersTree restates an error about the series' clone of t's HEAD in terms
// of t: the user knows their tree, not the temporary clone.
func ofUsersTree(err error, t *Tree, clone string) error {
	var prob *Problem
	if errors.As(err, &prob) {
		lines := append([]string(nil), prob.Lines...)
		if len(lines) > 0 && strings.HasPrefix(lines[0], "refusing to patch "+clone) {
			lines[0] = "cannot write a series for " + t.Root + " (its HEAD), nothing was written:"
		}
		return &Problem{Lines: lines}
	}
	return errors.New(strings.ReplaceAll(err.Error(), clone, t.Root))
}
