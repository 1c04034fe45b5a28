package gentree

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestManifestRoundTrip(t *testing.T) {
	in := []Entry{{Path: "b/x.go", Hash: Hash([]byte("x")), Backend: "go", Op: "ssm_conv"}, {Path: "a/doc.go", Hash: Hash([]byte("doc")), Backend: "go"}}
	out, err := Parse(Render(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{in[1], in[0]} // sorted by path
	if d := cmp.Diff(want, out); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	if _, err := Parse([]byte("only two\tfields\n")); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("bad manifest: %v", err)
	}
}

// A damaged manifest is a *ManifestError naming the line and what is wrong
// with it: truncation, a merge conflict, a bad path or hash, a repeat.
func TestParseRejectsDamage(t *testing.T) {
	good := string(Render([]Entry{{Path: "a/x.go", Hash: Hash([]byte("x")), Backend: "go", Op: "op"}}))
	h := Hash(nil)
	for _, c := range []struct{ text, want string }{
		{good[:len(good)-9], "does not end with a newline"},
		{good + "<<<<<<< HEAD\n", "line 5: want 4 tab-separated fields"},
		{good + "../x\t" + h + "\tgo\t-\n", `path "../x" is not a clean relative path`},
		{good + "a//b\t" + h + "\tgo\t-\n", "not a clean relative path"},
		{good + "MANIFEST\t" + h + "\tgo\t-\n", "not a clean relative path"},
		{good + "a/x.go\t" + h + "\tgo\t-\n", "a/x.go is listed twice"},
		{good + "b\tabc\tgo\t-\n", `"abc" is not a sha256`},
		{good + "b\t" + h + "\t\t-\n", "empty backend"},
	} {
		_, err := Parse([]byte(c.text))
		var me *ManifestError
		if !errors.As(err, &me) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v; want a ManifestError saying %q", c.text, err, c.want)
		}
	}
}

// With the manifest ignored, every file on disk is foreign and the damaged
// manifest is rewritten (changed, not added) to list the rebuilt backends.
func TestComposeIgnoringManifest(t *testing.T) {
	old := map[string][]byte{ManifestName: []byte("garbage"), "goref/a.go": []byte("a"), "metal/k.metal": []byte("m")}
	plan, err := ComposeIgnoringManifest(old, map[string][]File{"go": {{Path: "goref/a.go", Data: []byte("a")}}})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"goref/a.go", "metal/k.metal"}, plan.Foreign); d != "" {
		t.Errorf("foreign: %s", d)
	}
	if d := cmp.Diff([]string{ManifestName}, plan.Changed); d != "" || len(plan.Added) != 0 {
		t.Errorf("changed %v added %v", plan.Changed, plan.Added)
	}
	if entries, err := Parse(plan.Files[ManifestName]); err != nil || len(entries) != 1 || entries[0].Path != "goref/a.go" {
		t.Errorf("new manifest: %v %v", entries, err)
	}
	if _, ok := plan.Files["metal/k.metal"]; ok {
		t.Error("a file the damaged manifest may have listed was kept")
	}
}

func TestComposeKeepsOtherBackendsAndFindsForeignFiles(t *testing.T) {
	old := map[string][]byte{
		"goref/a.go": []byte("a1"), "goref/gone.go": []byte("g"),
		"metal/k.metal": []byte("m"), "notes.txt": []byte("mine"),
	}
	old[ManifestName] = Render([]Entry{
		{Path: "goref/a.go", Hash: Hash([]byte("a1")), Backend: "go"},
		{Path: "goref/gone.go", Hash: Hash([]byte("g")), Backend: "go"},
		{Path: "metal/k.metal", Hash: Hash([]byte("m")), Backend: "metal"},
	})
	plan, err := Compose(old, map[string][]File{"go": {{Path: "goref/a.go", Data: []byte("a2")}, {Path: "goref/b.go", Data: []byte("b")}}})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"notes.txt"}, plan.Foreign); d != "" {
		t.Errorf("foreign: %s", d)
	}
	if string(plan.Files["metal/k.metal"]) != "m" {
		t.Error("the metal file of a backend not rebuilt was dropped")
	}
	if d := cmp.Diff([]string{"goref/b.go"}, plan.Added); d != "" {
		t.Errorf("added: %s", d)
	}
	if d := cmp.Diff([]string{ManifestName, "goref/a.go"}, plan.Changed); d != "" {
		t.Errorf("changed: %s", d)
	}
	if d := cmp.Diff([]string{"goref/gone.go"}, plan.Removed); d != "" {
		t.Errorf("removed: %s", d)
	}
	if _, ok := plan.Files["notes.txt"]; ok {
		t.Error("a foreign file was adopted into the plan")
	}
}

func TestComposeReportsAMissingKeptFile(t *testing.T) {
	old := map[string][]byte{ManifestName: Render([]Entry{{Path: "metal/k.metal", Hash: Hash([]byte("x")), Backend: "metal"}})}
	_, err := Compose(old, map[string][]File{"go": nil})
	if err == nil || !strings.Contains(err.Error(), "kernelgen build --backend metal") {
		t.Errorf("missing file of a kept backend: %v", err)
	}
}

func TestVerifyFindsHandEdits(t *testing.T) {
	tree := map[string][]byte{"a": []byte("edited"), ManifestName: Render([]Entry{{Path: "a", Hash: Hash([]byte("orig")), Backend: "go"}, {Path: "b", Hash: Hash([]byte("b")), Backend: "go"}})}
	bad := Verify(tree)
	if len(bad) != 2 || !strings.Contains(bad[0], "edited by hand") || !strings.Contains(bad[1], "missing") {
		t.Errorf("Verify = %q", bad)
	}
}

// The module root is found from any directory below it, as go finds it; a
// directory outside any module, or in another one, is an error saying so.
func TestModuleRoot(t *testing.T) {
	root, err := ModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "cmd", "kernelgen")); err != nil {
		t.Fatalf("ModuleRoot(.) = %s, which has no cmd/kernelgen", root)
	}
	if got, err := ModuleRoot(filepath.Join("..", "..", "ops", "testdata")); err != nil || got != root {
		t.Errorf("from ops/testdata: %q %v, want %s", got, err, root)
	}
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "go.mod"), []byte("module example.com/other\n\ngo 1.24\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(other, "sub"), 0o755)
	if _, err := ModuleRoot(filepath.Join(other, "sub")); err == nil || !strings.Contains(err.Error(), `module "example.com/other"`) {
		t.Errorf("in another module: %v", err)
	}
	if _, err := ModuleRoot(string(filepath.Separator)); err == nil || !strings.Contains(err.Error(), "no go.mod") {
		t.Errorf("at the file system root: %v", err)
	}
}
