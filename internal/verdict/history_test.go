package verdict

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/ir/canon"
	"github.com/kernelgen/kernelgen/ir/irtext"
)

// recentRevisions is how many of the newest revisions that changed
// generated/ir the history test reads, besides those around every change
// of the IR text format.
const recentRevisions = 20

// IR texts committed since kernelgen first wrote generated/ir read back and
// have a canonical form, so kernelgen diff can judge a revision against
// another: the newest recentRevisions revisions of generated/ir, and for
// every revision that changed the text's printer or parser, generated/ir
// there and just before it (the last text of each format). A bounded
// window: the test does not grow with every commit. (Skipped outside a git
// checkout or in a shallow one that lacks the history.)
func TestCommittedRevisionsReadBack(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	// --full-history: by default git log follows only one parent of a merge
	// whose generated/ir equals that parent's, and skips the other side.
	recent, err := exec.Command("git", "log", "--full-history", "-n", fmt.Sprint(recentRevisions), "--format=%H", "--", "../../generated/ir").Output()
	if err != nil || len(recent) == 0 {
		t.Skipf("no history of generated/ir: %v", err)
	}
	format, err := exec.Command("git", "log", "--full-history", "--format=%H %P", "--", "../../ir/print.go", "../../ir/irtext").Output()
	if err != nil {
		t.Fatal(err)
	}
	revs := strings.Fields(string(recent))
	for _, line := range strings.Split(strings.TrimSpace(string(format)), "\n") {
		revs = append(revs, strings.Fields(line)...) // the change and its parents
	}
	var objects []string
	names := map[string]string{}
	for _, rev := range revs {
		list, err := exec.Command("git", "ls-tree", "-r", rev, "--", "../../generated/ir").Output()
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(list)), "\n") {
			f := strings.Fields(l)
			if len(f) == 4 && strings.HasSuffix(f[3], ".ir") && names[f[2]] == "" {
				names[f[2]] = rev[:8] + ":" + strings.TrimPrefix(f[3], "../../")
				objects = append(objects, f[2])
			}
		}
	}
	cmd := exec.Command("git", "cat-file", "--batch")
	cmd.Stdin = strings.NewReader(strings.Join(objects, "\n") + "\n")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(out)
	for _, obj := range objects {
		var sha, kind string
		var size int
		if _, err := fmt.Fscanf(r, "%s %s %d\n", &sha, &kind, &size); err != nil {
			t.Fatal(err)
		}
		data := make([]byte, size+1)
		if _, err := io.ReadFull(r, data); err != nil {
			t.Fatal(err)
		}
		k, err := irtext.Parse(names[obj], string(data[:size]))
		if err == nil {
			_, err = canon.Of(k)
		}
		if err != nil {
			t.Errorf("%v", err)
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d distinct IR texts from %d revisions", len(objects), len(revs))
}
