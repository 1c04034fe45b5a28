package hostemu

// The Metal Shading Language's skin (internal/backend/metal owns this file).

import (
	"fmt"
	"regexp"
)

// MSL is the Metal Shading Language under hostemu/msl.h.
var MSL = &Lang{name: "msl", skin: "hostemu/msl.h", check: checkMSL, forClang: withoutHostNames}

// hostNameAttr is Metal's [[host_name("...")]] on an explicit
// instantiation, where clang (unlike g++) rejects an attribute list.
var hostNameAttr = regexp.MustCompile(`\[\[host_name\("[^"]*"\)\]\] ?`)

// withoutHostNames removes the host names of a source, in place on their
// lines, for clang to compile.
func withoutHostNames(src []byte) []byte { return hostNameAttr.ReplaceAll(src, nil) }

// checkMSL rejects threadgroup memory the emulation cannot give its
// meaning: `threadgroup` maps to `static` (shared by the workgroup), which
// is only right for variables and arrays declared in a kernel; a
// threadgroup pointer, reference, parameter, cast or initialized
// declaration would fail to compile or, worse, be initialized once for all
// threads.
func checkMSL(file string, toks []token) []string {
	var msgs []string
	for i, t := range toks {
		switch {
		case t.text == "threadgroup" && i >= 2 && toks[i-1].text == "[" && toks[i-2].text == "[":
			msgs = append(msgs, fmt.Sprintf("%s:%d: error: threadgroup memory kernel arguments ([[threadgroup(n)]]) are not supported by the host emulation; declare a threadgroup array in the kernel", file, t.line))
		case t.text == "threadgroup":
			if why := threadgroupUse(toks[i+1:]); why != "" {
				msgs = append(msgs, fmt.Sprintf("%s:%d: error: threadgroup %s is not supported by the host emulation (threadgroup maps to static: only threadgroup variables and arrays declared inside a kernel, without initializer, work)", file, t.line, why))
			}
		}
	}
	return msgs
}

// threadgroupUse classifies what follows `threadgroup`: "" for a plain
// variable or array declaration, else what it is.
func threadgroupUse(rest []token) string {
	idents := 0
	for _, t := range rest {
		switch t.text {
		case "*", "&", "&&":
			return "pointer or reference"
		case "[", ";":
			if idents >= 2 {
				return ""
			}
			return "use"
		case "=", "{":
			return "declaration with an initializer"
		case ")", ",", "(":
			return "parameter or cast"
		}
		if isIdentStart(t.text[0]) {
			idents++
		}
	}
	return "use"
}
