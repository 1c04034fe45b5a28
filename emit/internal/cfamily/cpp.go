package cfamily

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/kernelgen/kernelgen/ir"
)

// What the three C++ dialects (CUDA, SYCL, MSL) share beyond the body:
// reserved words, template parameters, the parameter list layout, the
// subgroup shuffle loop of their reductions and the file skeleton.

// cppKeywords are C++'s keywords, which no generated identifier may take.
const cppKeywords = `alignas alignof and asm auto bool break case catch char class const constexpr
	const_cast continue decltype default delete do double dynamic_cast else enum explicit export extern
	false float for friend goto if inline int long mutable namespace new noexcept not nullptr operator or
	private protected public register reinterpret_cast return short signed sizeof static static_assert
	static_cast struct switch template this throw true try typedef typeid typename union unsigned using
	virtual void volatile wchar_t while`

// CPPReserved returns the set of C++'s keywords plus extra (a
// whitespace-separated list of the dialect's builtins and the emitter's own
// kg_ names).
func CPPReserved(extra string) map[string]bool {
	set := map[string]bool{}
	for _, w := range strings.Fields(cppKeywords + " " + extra) {
		set[w] = true
	}
	return set
}

// Unsupported returns an error naming what the emitters cannot spell yet in
// k (bf16 buffers), prefixed with the backend, or nil.
func Unsupported(backend string, k *ir.Kernel) error {
	for _, buf := range k.Buffers {
		if buf.Elem == ir.BF16 {
			return fmt.Errorf("%s: %s: bf16 buffer %s is not supported yet", backend, k.ID(), buf.Name)
		}
	}
	return nil
}

// TemplateParams returns the kernel's params as C++ template parameters,
// derived ones with their defining expression as default argument (so that
// launch bounds and array lengths can use them).
func (p *Printer) TemplateParams() []string {
	var out []string
	for _, x := range p.K.Params {
		decl := fmt.Sprintf("%s %s", p.D.Type(x.Type), p.Name(x, x.Name))
		if x.Derived != nil {
			decl += " = " + p.Expr(x.Derived)
		}
		out = append(out, decl)
	}
	return out
}

// PointerParams returns the buffers as restrict pointers (const where only
// read) followed by the scalar args by value: CUDA's and SYCL's signature.
// Where the dialect's dispatches overlap (its DepWait is a real wait), a
// buffer the previous dispatch writes (ir.Buffer.Prior) is no restrict
// pointer: the compiler would take it as read-only for the whole kernel
// and may load it before the wait. Other inputs stay restrict: plain
// pointers for all of them cost op B up to 1.24x (bench/RESULTS.md, call
// 54).
func (p *Printer) PointerParams() []string {
	var out []string
	for _, buf := range p.K.Buffers {
		if restrictLocal(p.D, buf) {
			out = append(out, strings.TrimSuffix(PointerType(p.D, buf), p.restrict()+" ")+p.Name(buf, buf.Name)+"_ptr")
			continue
		}
		out = append(out, PointerType(p.D, buf)+p.Name(buf, buf.Name))
	}
	for _, a := range p.K.Args {
		t := p.D.Type(a.Type)
		if d, ok := p.D.(Divider); ok && d.DividesBy(p.K, a) {
			t = d.DivisorType()
		}
		out = append(out, fmt.Sprintf("const %s %s", t, p.Name(a, a.Name)))
	}
	return out
}

// Divider is a dialect that divides by some of a kernel's args through
// values the host precomputes (ggml-cuda's fastdiv): DividesBy says which,
// DivisorType is such an arg's parameter type, and Divide spells x / a or
// x % a over it.
type Divider interface {
	DividesBy(k *ir.Kernel, a *ir.Arg) bool
	DivisorType() string
	Divide(op ir.BinOp, x, a string) string
}

// PointerType spells buf's pointer parameter type in dialect d, with the
// space before the name (see PointerParams).
func PointerType(d Dialect, buf *ir.Buffer) string {
	c := ""
	if buf.Access == ir.Read {
		c = "const "
	}
	if buf.Prior && d.DepSync(ir.DepWait) != "" {
		return c + d.Type(buf.Elem) + " * "
	}
	restrict := "__restrict__"
	if r, ok := d.(Restricter); ok {
		restrict = r.Restrict()
	}
	return c + d.Type(buf.Elem) + " * " + restrict + " "
}

// Restricter is a dialect that spells the restrict qualifier its own way
// (ggml-cuda's GGML_CUDA_RESTRICT, which is empty where PDL is on). Such a
// qualifier differs between a compiler's host and device passes, so it is
// kept out of the signature, as ggml-cuda's kernels do: the parameter is a
// plain name_ptr and the body's first lines restrict-qualify it
// (RestrictLocals). nvcc rejects a template kernel whose parameter types
// differ between the two passes.
type Restricter interface{ Restrict() string }

func restrictLocal(d Dialect, buf *ir.Buffer) bool {
	_, ok := d.(Restricter)
	return ok && !(buf.Prior && d.DepSync(ir.DepWait) != "")
}

func (p *Printer) restrict() string { return p.D.(Restricter).Restrict() }

// RestrictLocals declares the restrict-qualified locals of a Restricter
// dialect's pointer parameters (see Restricter); none for other dialects.
func (p *Printer) RestrictLocals() {
	for _, buf := range p.K.Buffers {
		if restrictLocal(p.D, buf) {
			name := p.Name(buf, buf.Name)
			p.Line("%s%s = %s_ptr;", PointerType(p.D, buf), name, name)
		}
	}
}

// WriteParams writes a function's parameter list, one parameter per line,
// and opens its body.
func WriteParams(b *strings.Builder, params []string) {
	for i, s := range params {
		sep := ","
		if i == len(params)-1 {
			sep = ") {"
		}
		fmt.Fprintf(b, "        %s%s\n", s, sep)
	}
}

// Comment returns text as // comment lines of at most about width columns.
func Comment(text string, width int) string {
	var b strings.Builder
	line := "//"
	for _, w := range strings.Fields(text) {
		if len(line)+1+len(w) > width && line != "//" {
			b.WriteString(line + "\n")
			line = "//"
		}
		line += " " + w
	}
	b.WriteString(line + "\n")
	return b.String()
}

// WritePackedParams writes a function's parameter list as ggml's kernels
// often do, several parameters to a line of at most about 100 columns (a
// new line where the buffers end, the scalars start and extra starts),
// and opens its body.
func (p *Printer) WritePackedParams(b *strings.Builder, extra ...string) {
	params := p.PointerParams()
	groups := [][]string{params[:len(p.K.Buffers)], params[len(p.K.Buffers):]}
	if len(extra) > 0 {
		groups = append(groups, extra)
	}
	var lines []string
	for _, g := range groups {
		cur := ""
		for _, s := range g {
			if cur != "" && len(cur)+len(s)+2 > 92 {
				lines = append(lines, cur)
				cur = ""
			}
			if cur != "" {
				cur += ", "
			}
			cur += s
		}
		if cur != "" {
			lines = append(lines, cur)
		}
	}
	for i, l := range lines {
		sep := ","
		if i == len(lines)-1 {
			sep = ") {"
		}
		fmt.Fprintf(b, "        %s%s\n", l, sep)
	}
}

// WriteBody writes the printed lines and closes the function.
func (p *Printer) WriteBody(b *strings.Builder) {
	for _, l := range p.Lines() {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	b.WriteString("}\n")
}

// ShuffleLoop is the subgroup half of a C++ dialect's Reduce: an unrolled
// xor butterfly over offsets width/2 .. 1 (the lowering's offset off, of
// type offType: the shuffle intrinsic's), each step the dialect's
// statement step.
func ShuffleLoop(offType, off, width, step string) []string {
	return []string{
		"#pragma unroll",
		fmt.Sprintf("    for (%s %s = %s / 2; %s > 0; %s >>= 1) {", offType, off, width, off, off),
		"        " + step,
		"    }",
	}
}

// AppendKernels appends each kernel's source, as kernel renders it, after a
// blank line: the body of every C++ dialect's per-op file.
func AppendKernels(b *bytes.Buffer, kernels []*ir.Kernel, kernel func(*ir.Kernel) (string, error)) error {
	for _, k := range kernels {
		src, err := kernel(k)
		if err != nil {
			return err
		}
		b.WriteString("\n")
		b.WriteString(src)
	}
	return nil
}

// Named is a kernel's function (or file) name as every C-family emitter
// forms it from ggml's: prefix, the kernel's name and suffix, then
// "_portable" under the portable contract. The native contract and the
// contract-free kernels keep ggml's name.
func Named(k *ir.Kernel, prefix, suffix string) string {
	if k.Arith.Native || k.ArithFree {
		return prefix + k.Name + suffix
	}
	return prefix + k.Name + suffix + "_portable"
}
