package udiff

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func numbered(n int, edit func(i int) string) string {
	var sb strings.Builder
	for i := 1; i <= n; i++ {
		sb.WriteString(edit(i))
	}
	return sb.String()
}

func plain(i int) string { return fmt.Sprintf("%d\n", i) }

func TestUnifiedGolden(t *testing.T) {
	ten := numbered(10, plain)
	cases := []struct {
		name     string
		old, new string
		want     string
	}{
		{"equal", ten, ten, ""},
		{"both empty", "", "", ""},
		{"insert middle", ten, numbered(10, func(i int) string {
			if i == 5 {
				return "5\nX\n"
			}
			return plain(i)
		}), `@@ -3,6 +3,7 @@
 3
 4
 5
+X
 6
 7
 8
`},
		{"delete start", ten, strings.TrimPrefix(ten, "1\n"), `@@ -1,4 +1,3 @@
-1
 2
 3
 4
`},
		{"insert start", ten, "0\n" + ten, `@@ -1,3 +1,4 @@
+0
 1
 2
 3
`},
		{"change end", ten, strings.Replace(ten, "10\n", "ten\n", 1), `@@ -7,4 +7,4 @@
 7
 8
 9
-10
+ten
`},
		{"append end", ten, ten + "11\n", `@@ -8,3 +8,4 @@
 8
 9
 10
+11
`},
		{"change middle block", ten, strings.Replace(ten, "5\n6\n", "five\nsix\nsix.5\n", 1), `@@ -2,8 +2,9 @@
 2
 3
 4
-5
-6
+five
+six
+six.5
 7
 8
 9
`},
		{"empty old", "", "a\nb\n", `@@ -0,0 +1,2 @@
+a
+b
`},
		{"empty new", "a\n", "", `@@ -1 +0,0 @@
-a
`},
		{"single line change", "a\n", "b\n", `@@ -1 +1 @@
-a
+b
`},
		{"newline added at end", "a\nb", "a\nb\n", `@@ -1,2 +1,2 @@
 a
-b
\ No newline at end of file
+b
`},
		{"newline removed at end", "a\nb\n", "a\nb", `@@ -1,2 +1,2 @@
 a
-b
+b
\ No newline at end of file
`},
		{"context line without newline", "a\nb", "A\nb", `@@ -1,2 +1,2 @@
-a
+A
 b
\ No newline at end of file
`},
		{"both last lines changed without newline", "x\ny", "x\nz", `@@ -1,2 +1,2 @@
 x
-y
\ No newline at end of file
+z
\ No newline at end of file
`},
		{"no newline far from change", "a\nb\nc\nd\ne\nf", "A\nb\nc\nd\ne\nf", `@@ -1,4 +1,4 @@
-a
+A
 b
 c
 d
`},
		{"empty old, new without newline", "", "a", `@@ -0,0 +1 @@
+a
\ No newline at end of file
`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Unified("a/f", "b/f", []byte(tc.old), []byte(tc.new))
			want := tc.want
			if want != "" {
				want = "--- a/f\n+++ b/f\n" + want
			}
			if got != want {
				t.Errorf("got:\n%s\nwant:\n%s", got, want)
			}
			if got != "" {
				if applied, err := apply(tc.old, got); err != nil || applied != tc.new {
					t.Errorf("apply: %q, %v; want %q", applied, err, tc.new)
				}
			}
		})
	}
}

// Changes separated by up to 6 unchanged lines share a hunk; 7 split it.
func TestHunkMerging(t *testing.T) {
	old := numbered(20, plain)
	change := func(lines ...int) string {
		return numbered(20, func(i int) string {
			for _, l := range lines {
				if i == l {
					return fmt.Sprintf("c%d\n", i)
				}
			}
			return plain(i)
		})
	}
	merged := Unified("o", "n", []byte(old), []byte(change(3, 10)))
	if h := hunkHeaders(merged); strings.Join(h, ";") != "@@ -1,13 +1,13 @@" {
		t.Errorf("gap of 6: headers %q\n%s", h, merged)
	}
	split := Unified("o", "n", []byte(old), []byte(change(3, 11)))
	if h := hunkHeaders(split); strings.Join(h, ";") != "@@ -1,6 +1,6 @@;@@ -8,7 +8,7 @@" {
		t.Errorf("gap of 7: headers %q\n%s", h, split)
	}
	tail := Unified("o", "n", []byte(old), []byte(change(1, 20)))
	if h := hunkHeaders(tail); strings.Join(h, ";") != "@@ -1,4 +1,4 @@;@@ -17,4 +17,4 @@" {
		t.Errorf("ends: headers %q\n%s", h, tail)
	}
}

func hunkHeaders(d string) []string {
	var hs []string
	for _, l := range strings.Split(d, "\n") {
		if strings.HasPrefix(l, "@@") {
			hs = append(hs, l)
		}
	}
	return hs
}

var hunkRE = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@\n$`)

// apply is a small, strict patch applier: every context and deleted line
// must match old at the position the header names, counts must agree, and
// the new-side start must match where the line lands in the result.
func apply(old, diff string) (string, error) {
	lines := splitLines(diff)
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "--- ") || !strings.HasPrefix(lines[1], "+++ ") {
		return "", fmt.Errorf("bad headers")
	}
	src := splitLines(old)
	var out []string
	pos := 0 // next unconsumed line of src
	k := 2
	for k < len(lines) {
		m := hunkRE.FindStringSubmatch(lines[k])
		if m == nil {
			return "", fmt.Errorf("line %d: expected hunk header, got %q", k, lines[k])
		}
		k++
		count := func(s string) int {
			if s == "" {
				return 1
			}
			n, _ := strconv.Atoi(s)
			return n
		}
		oStart, _ := strconv.Atoi(m[1])
		nStart, _ := strconv.Atoi(m[3])
		oCount, nCount := count(m[2]), count(m[4])
		first := oStart - 1
		if oCount == 0 {
			first = oStart
		}
		if first < pos || first > len(src) {
			return "", fmt.Errorf("hunk start %d out of order", oStart)
		}
		out = append(out, src[pos:first]...)
		pos = first
		wantN := nStart - 1
		if nCount == 0 {
			wantN = nStart
		}
		if len(out) != wantN {
			return "", fmt.Errorf("new start %d but result has %d lines", nStart, len(out))
		}
		seenO, seenN := 0, 0
		for k < len(lines) && !strings.HasPrefix(lines[k], "@@") {
			l := lines[k]
			k++
			if !strings.HasSuffix(l, "\n") {
				return "", fmt.Errorf("diff line %q lacks newline", l)
			}
			body := l[1:]
			if k < len(lines) && lines[k] == noNewline {
				body = strings.TrimSuffix(body, "\n")
				k++
			}
			switch l[0] {
			case ' ', '-':
				if pos >= len(src) || src[pos] != body {
					return "", fmt.Errorf("mismatch at old line %d: %q", pos+1, body)
				}
				pos++
				seenO++
				if l[0] == ' ' {
					out = append(out, body)
					seenN++
				}
			case '+':
				out = append(out, body)
				seenN++
			default:
				return "", fmt.Errorf("bad diff line %q", l)
			}
		}
		if seenO != oCount || seenN != nCount {
			return "", fmt.Errorf("hunk %s counts %d,%d; saw %d,%d", strings.TrimSpace(m[0]), oCount, nCount, seenO, seenN)
		}
	}
	out = append(out, src[pos:]...)
	return strings.Join(out, ""), nil
}

// lcsLen is the textbook quadratic LCS, the yardstick for minimality.
func lcsLen(a, b []string) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			switch {
			case a[i] == b[j]:
				cur[j+1] = prev[j] + 1
			case prev[j+1] >= cur[j]:
				cur[j+1] = prev[j+1]
			default:
				cur[j+1] = cur[j]
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func randText(r *rand.Rand, n, alphabet int) string {
	var sb strings.Builder
	for range n {
		fmt.Fprintf(&sb, "%c\n", 'a'+rune(r.IntN(alphabet)))
	}
	s := sb.String()
	if r.IntN(4) == 0 {
		s = strings.TrimSuffix(s, "\n")
	}
	return s
}

func mutate(r *rand.Rand, s string) string {
	lines := splitLines(s)
	if len(lines) > 0 && !strings.HasSuffix(lines[len(lines)-1], "\n") {
		lines[len(lines)-1] += "\n"
	}
	for range r.IntN(6) {
		p := r.IntN(len(lines) + 1)
		switch r.IntN(3) {
		case 0:
			lines = append(lines[:p], append([]string{fmt.Sprintf("new%d\n", r.IntN(5))}, lines[p:]...)...)
		case 1:
			if p < len(lines) {
				lines = append(lines[:p], lines[p+1:]...)
			}
		default:
			if p < len(lines) {
				lines[p] = fmt.Sprintf("%c\n", 'a'+rune(r.IntN(4)))
			}
		}
	}
	out := strings.Join(lines, "")
	if r.IntN(4) == 0 {
		out = strings.TrimSuffix(out, "\n")
	}
	return out
}

func TestRandomApplyAndMinimal(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	n := 5000
	if testing.Short() {
		n = 500
	}
	for it := range n {
		var old, new string
		if it%2 == 0 {
			old, new = randText(r, r.IntN(30), 1+r.IntN(5)), randText(r, r.IntN(30), 1+r.IntN(5))
		} else {
			old = randText(r, r.IntN(60), 2+r.IntN(8))
			new = mutate(r, old)
		}
		d := Unified("old", "new", []byte(old), []byte(new))
		if (d == "") != (old == new) {
			t.Fatalf("empty diff mismatch for %q -> %q:\n%s", old, new, d)
		}
		if d == "" {
			continue
		}
		got, err := apply(old, d)
		if err != nil || got != new {
			t.Fatalf("apply failed (%v) for %q -> %q, got %q:\n%s", err, old, new, got, d)
		}
		edits := 0
		for _, l := range splitLines(d)[2:] {
			if l[0] == '+' || l[0] == '-' {
				edits++
			}
		}
		a, b := splitLines(old), splitLines(new)
		if want := len(a) + len(b) - 2*lcsLen(a, b); edits != want {
			t.Fatalf("%d edits, minimum is %d, for %q -> %q:\n%s", edits, want, old, new, d)
		}
		checkHunkShape(t, d)
	}
}

// checkHunkShape asserts diff -u's layout: a hunk opens and closes with at
// most 3 context lines and never holds a run of more than 6.
func checkHunkShape(t *testing.T, d string) {
	t.Helper()
	for _, h := range strings.Split(d, "\n@@")[1:] {
		var kinds []byte
		for _, l := range strings.Split(h, "\n")[1:] {
			if l != "" && l[0] != '\\' {
				kinds = append(kinds, l[0])
			}
		}
		s := string(kinds)
		lead := len(s) - len(strings.TrimLeft(s, " "))
		trail := len(s) - len(strings.TrimRight(s, " "))
		if lead > 3 || trail > 3 || strings.Contains(strings.Trim(s, " "), "       ") {
			t.Fatalf("bad hunk shape %q in:\n%s", s, d)
		}
	}
}

func TestLargeFiles(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	var sb strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&sb, "line %d %d\n", i, r.IntN(1000))
	}
	old := sb.String()
	lines := splitLines(old)
	for range 300 {
		p := r.IntN(len(lines))
		switch r.IntN(3) {
		case 0:
			lines[p] = "changed\n"
		case 1:
			lines = append(lines[:p], lines[p+1:]...)
		default:
			lines = append(lines[:p], append([]string{"inserted\n"}, lines[p:]...)...)
		}
	}
	new := strings.Join(lines, "")
	d := Unified("old", "new", []byte(old), []byte(new))
	if got, err := apply(old, d); err != nil || got != new {
		t.Fatalf("apply failed: %v", err)
	}

	// Two unrelated 20k-line files sharing only a few line values: the
	// worst case for a plain O(ND) diff.
	var x, y strings.Builder
	for range 20000 {
		fmt.Fprintf(&x, "%d\n", r.IntN(50))
		fmt.Fprintf(&y, "%d\n", r.IntN(50))
	}
	if testing.Short() {
		return
	}
	d = Unified("x", "y", []byte(x.String()), []byte(y.String()))
	if got, err := apply(x.String(), d); err != nil || got != y.String() {
		t.Fatalf("apply failed on dissimilar files: %v", err)
	}
}

func BenchmarkUnified20k(b *testing.B) {
	r := rand.New(rand.NewPCG(11, 12))
	var sb strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&sb, "line %d\n", i)
	}
	old := sb.String()
	lines := splitLines(old)
	for range 200 {
		lines[r.IntN(len(lines))] = "changed\n"
	}
	new := strings.Join(lines, "")
	for b.Loop() {
		Unified("a", "b", []byte(old), []byte(new))
	}
}
