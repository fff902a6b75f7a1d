package mcp

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// resourceTemplate names a session file at a revision, or one section of it:
// ckpt://alpha/checkpoint.md, ckpt://alpha/checkpoint.md@HEAD~3,
// ckpt://alpha/checkpoint.md@before-compact#🔑 (the section may be percent-encoded).
const resourceTemplate = "ckpt://{session}/{+path}"

// maxResource bounds a resource: a client reads it whole, so a larger file is cut and
// says where ckpt_show can read on.
const maxResource = 64 << 10

func (s *Server) addResources() {
	s.sdk.AddResourceTemplate(&sdk.ResourceTemplate{
		Name:        "checkpoint",
		Title:       "A session file at a revision",
		URITemplate: resourceTemplate,
		MIMEType:    "text/markdown",
		Description: "ckpt://SESSION/FILE[@REV][#SECTION]: a session file (checkpoint.md, notes.md, checkpoint-<topic>.md) at a revision (a commit hash, HEAD~N, before-compact or a time; default HEAD), or one section of it (emoji, §N, number or heading text, percent-encoded).",
	}, s.readResource)
}

// parseResource splits ckpt://SESSION/FILE@REV#SECTION.
func parseResource(uri string) (session, file, rev, section string, err error) {
	rest, ok := strings.CutPrefix(uri, "ckpt://")
	if !ok {
		return "", "", "", "", fmt.Errorf("%s: not a ckpt:// URI", clip(uri, 80))
	}
	rest, section, _ = strings.Cut(rest, "#")
	session, rest, ok = strings.Cut(rest, "/")
	if !ok || session == "" || rest == "" {
		return "", "", "", "", fmt.Errorf("%s: want ckpt://SESSION/FILE[@REV][#SECTION]", clip(uri, 80))
	}
	file, rev, _ = strings.Cut(rest, "@")
	parts := []*string{&session, &file, &rev, &section}
	for _, p := range parts {
		if *p, err = url.PathUnescape(*p); err != nil {
			return "", "", "", "", fmt.Errorf("%s: bad percent-encoding", clip(uri, 80))
		}
	}
	return session, file, rev, section, nil
}

func (s *Server) readResource(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	uri := req.Params.URI
	fail := func(err error) error {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: toolError(err).Error()}
	}
	session, file, rev, section, err := parseResource(uri)
	if err != nil {
		return nil, fail(err)
	}
	sh, err := s.history.Show(session, rev, file, section)
	if err != nil {
		return nil, fail(err)
	}
	text, rest := cutText(sh.Content, maxResource)
	if rest > 0 {
		text += fmt.Sprintf("\n… truncated, %d more bytes: ckpt_show with session %q, file %q, rev %q and cursor \"%d\" reads on\n", rest, session, file, sh.Commit, len(text))
	}
	meta := sdk.Meta{"session": sh.Session, "commit": sh.Commit, "time": timeString(sh.Time)}
	if sh.Section != "" {
		meta["section"] = sh.Section
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: text, Meta: meta}}}, nil
}
