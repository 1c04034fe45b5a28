package gentree

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestManifestRoundTrip(t *testing.T) {
	in := []Entry{{Path: "b/x.go", Hash: "h2", Backend: "go", Op: "ssm_conv"}, {Path: "a/doc.go", Hash: "h1", Backend: "go"}}
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
	old := map[string][]byte{ManifestName: Render([]Entry{{Path: "metal/k.metal", Hash: "x", Backend: "metal"}})}
	_, err := Compose(old, map[string][]File{"go": nil})
	if err == nil || !strings.Contains(err.Error(), "kernelgen build --backend metal") {
		t.Errorf("missing file of a kept backend: %v", err)
	}
}

func TestVerifyFindsHandEdits(t *testing.T) {
	tree := map[string][]byte{"a": []byte("edited"), ManifestName: Render([]Entry{{Path: "a", Hash: Hash([]byte("orig")), Backend: "go"}, {Path: "b", Hash: "h", Backend: "go"}})}
	bad := Verify(tree)
	if len(bad) != 2 || !strings.Contains(bad[0], "edited by hand") || !strings.Contains(bad[1], "missing") {
		t.Errorf("Verify = %q", bad)
	}
}
