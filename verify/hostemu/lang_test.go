package hostemu

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// A language is its declaration: the shared build reads its skin, its check
// and its clang rewrite from the Lang value alone, so a new language is a
// new value, not an edit of the build.
func TestALanguageIsItsDeclaration(t *testing.T) {
	lang := &Lang{name: "toy", skin: "hostemu/toy.h",
		check: func(file string, toks []token) []string {
			var msgs []string
			for _, tk := range toks {
				if tk.text == "forbidden" {
					msgs = append(msgs, fmt.Sprintf("%s:%d: error: forbidden", file, tk.line))
				}
			}
			return msgs
		},
		forClang: func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("gcc_only"), nil) },
	}
	p := Program{Name: "toy", Lang: lang, Sources: map[string][]byte{"k.toy": []byte("int a;\nforbidden b;\ngcc_only int c;\n")}}
	flags, err := flagsFor(lang, false, false)
	if err != nil {
		t.Fatal(err)
	}
	if forced := flags[slices.Index(flags, "-include")+1]; forced != "hostemu/toy.h" {
		t.Errorf("-include %s, want the language's skin", forced)
	}
	if msg := checkSources(p, []string{"k.toy"}); msg != "k.toy:2: error: forbidden" {
		t.Errorf("checkSources = %q, want the language's check", msg)
	}
	if got := string(forClang(p).Sources["k.toy"]); got != "int a;\nforbidden b;\n int c;\n" {
		t.Errorf("forClang = %q, want the language's rewrite", got)
	}
	if _, err := BuildWith(context.Background(), p, Options{CacheDir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "k.toy:2: error: forbidden") {
		t.Errorf("BuildWith: %v, want the language's check before any compiler", err)
	}
	if _, err := flagsFor(lang, false, true); err == nil {
		t.Error("Options.Real for a language no compiler implements: no error")
	}
}

// A program without a language is refused, by name.
func TestAProgramHasALanguage(t *testing.T) {
	_, err := BuildWith(context.Background(), Program{Name: "nolang"}, Options{CacheDir: t.TempDir()})
	if err == nil || err.Error() != "hostemu: program nolang has no language" {
		t.Errorf("BuildWith without a language: %v", err)
	}
}
