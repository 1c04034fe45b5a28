package patch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Series writes steps as a git format-patch series into out, a directory
// that must not exist yet (or be empty). The tree is not touched: the steps
// are applied and committed one by one in a shared clone of its HEAD, which
// is removed afterwards. Commits carry HEAD's date, so the same tree and the
// same kernelgen give the same series. It returns the patch file names.
func Series(ctx context.Context, t *Tree, steps []*Step, out string) ([]string, error) {
	if entries, err := os.ReadDir(out); err == nil && len(entries) > 0 {
		return nil, fmt.Errorf("--series %s: the directory exists and is not empty; name a new directory", out)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("--series %s: %w", out, err)
	}
	steps, err := expand(t, steps)
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
	head, err := git(t.Root, nil, "rev-parse", "HEAD")
	if err != nil {
		return nil, err
	}
	head = strings.TrimSpace(head)
	date, err := git(t.Root, nil, "log", "-1", "--format=%cI", "HEAD")
	if err != nil {
		return nil, err
	}
	env := []string{"GIT_AUTHOR_DATE=" + strings.TrimSpace(date), "GIT_COMMITTER_DATE=" + strings.TrimSpace(date)}
	// the user's identity when git has one, a placeholder otherwise
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

	work, err := os.MkdirTemp("", "kernelgen-series-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	clone := filepath.Join(work, "tree")
	from, err := filepath.Abs(t.Root) // git runs in work, not where --tree was given
	if err != nil {
		return nil, err
	}
	if _, err := git(work, nil, "clone", "-q", "--shared", "--no-checkout", from, clone); err != nil {
		return nil, err
	}
	if _, err := git(clone, nil, "checkout", "-q", "--detach", head); err != nil {
		return nil, err
	}
	ct := &Tree{Root: clone, GGML: t.GGML, Kind: t.Kind}
	commits := 0
	for _, s := range steps {
		o, err := apply(ctx, ct, []*Step{s})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Backend, ofUsersTree(err, t, clone))
		}
		if len(o.Written) == 0 {
			continue // nothing of this step applies to this tree (or HEAD already holds it)
		}
		if _, err := git(clone, env, "add", "-A"); err != nil {
			return nil, err
		}
		msg := filepath.Join(work, "msg")
		if err := os.WriteFile(msg, []byte(s.Subject+"\n\n"+s.Body), 0o644); err != nil {
			return nil, err
		}
		if _, err := git(clone, env, "-c", "core.hooksPath=/dev/null", "commit", "-q", "--no-verify", "-F", msg); err != nil {
			return nil, err
		}
		commits++
	}
	if commits == 0 {
		return nil, fmt.Errorf("%s already holds every change: the series would be empty", t.Root)
	}
	stage := filepath.Join(work, "series")
	if _, err := git(clone, env, "format-patch", "-q", "--no-signature", "-o", stage, head+"..HEAD"); err != nil {
		return nil, err
	}
	names, err := filepath.Glob(filepath.Join(stage, "*.patch"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	// copy, then report; on failure remove what was copied
	var written []string
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err == nil {
			err = os.WriteFile(filepath.Join(out, filepath.Base(n)), data, 0o644)
		}
		if err != nil {
			for _, w := range written {
				_ = os.Remove(w)
			}
			return nil, err
		}
		written = append(written, filepath.Join(out, filepath.Base(n)))
	}
	return written, nil
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
