package ui

import (
	"bytes"
	"html/template"
	"sync"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"
)

// markdown renders what sessions wrote. Raw HTML in a checkpoint is shown as text, never
// passed through: goldmark runs without html.WithUnsafe (which also drops javascript:
// links), and rawAsText replaces its "raw HTML omitted" comments with the escaped source,
// so a reader sees what the agent wrote.
var markdown = sync.OnceValue(func() goldmark.Markdown {
	return goldmark.New(
		goldmark.WithExtensions(extension.GFM),
		goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(rawAsText{}, 100))),
	)
})

// renderMarkdown returns src as HTML that is safe to put in a page.
func renderMarkdown(src []byte) template.HTML {
	var buf bytes.Buffer
	if err := markdown().Convert(src, &buf); err != nil {
		// Convert fails only on a writer error; show the source instead.
		return template.HTML("<pre>" + template.HTMLEscapeString(string(src)) + "</pre>")
	}
	return template.HTML(buf.String()) //nolint:gosec // goldmark escapes; raw HTML is escaped by rawAsText
}

// rawAsText renders HTML blocks and inline HTML as escaped text.
type rawAsText struct{}

func (rawAsText) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindHTMLBlock, renderHTMLBlockAsText)
	reg.Register(ast.KindRawHTML, renderRawHTMLAsText)
}

func renderHTMLBlockAsText(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.HTMLBlock)
	if entering {
		_, _ = w.WriteString(`<pre class="raw-html"><code>`)
		for i := range n.Lines().Len() {
			seg := n.Lines().At(i)
			template.HTMLEscape(w, seg.Value(source))
		}
		if !n.HasClosure() {
			_, _ = w.WriteString("</code></pre>\n")
		}
		return ast.WalkContinue, nil
	}
	if n.HasClosure() {
		template.HTMLEscape(w, n.ClosureLine.Value(source))
		_, _ = w.WriteString("</code></pre>\n")
	}
	return ast.WalkContinue, nil
}

func renderRawHTMLAsText(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkSkipChildren, nil
	}
	n := node.(*ast.RawHTML)
	_, _ = w.WriteString(`<code class="raw-html">`)
	for i := range n.Segments.Len() {
		seg := n.Segments.At(i)
		template.HTMLEscape(w, seg.Value(source))
	}
	_, _ = w.WriteString(`</code>`)
	return ast.WalkSkipChildren, nil
}
