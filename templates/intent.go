package templates

import (
	"regexp"
	"strings"
	"sync"
)

// Kinds of user request (seed 000, 1.5): a committing request updates the intent section, an
// inspecting one keeps it, and so does one that is neither ("when unsure, keep").
const (
	RequestCommitting = "committing"
	RequestInspecting = "inspecting"
	RequestUnsure     = "unsure"
)

// CommittingVerbs are seed 000's committing verbs (implement, write, build, fix, run, create,
// refactor, add, remove, update, design, debug), then more verbs that also name new work to
// deliver. docs/sync.md lists them; keep the two in step.
var CommittingVerbs = []string{
	"implement", "write", "build", "fix", "run", "create", "refactor", "add", "remove", "update", "design", "debug",
	"migrate", "move", "change", "make", "ship", "deploy", "release", "delete", "rename", "convert", "port",
	"upgrade", "install", "configure", "set up", "integrate", "finish", "complete", "continue", "resume",
	"start", "stage", "roll out", "bump", "merge", "publish", "cut", "replace", "rewrite", "test",
	"document", "clean up", "prepare", "backfill", "reconcile", "switch", "split", "drop",
	"实现", "编写", "构建", "修复", "运行", "创建", "重构", "添加", "移除", "更新", "设计", "调试",
	"迁移", "修改", "改", "删除", "重命名", "部署", "发布", "升级", "安装", "配置", "集成", "完成",
	"继续", "开始", "替换", "重写", "测试", "写", "做", "加", "把", "回填", "上线",
}

// InspectingVerbs are seed 000's inspecting verbs (find, list, show, print, check, tell,
// describe, explain, what is, why, how), then more words that open a question.
var InspectingVerbs = []string{
	"find", "list", "show", "print", "check", "tell", "describe", "explain", "what", "why", "how",
	"where", "which", "who", "when", "is", "are", "does", "did", "can", "could", "look up", "search",
	"count", "compare", "summarize", "summarise", "review",
	"查找", "列出", "展示", "打印", "检查", "告诉", "描述", "解释", "什么是", "为什么", "如何",
	"哪", "谁", "是否", "怎么", "看看", "查一下", "统计", "总结", "对比",
}

// requestLead is what may come before a request's verb: quotes, politeness, "let's".
var requestLead = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^(?:[\s"'“”‘’「」『』>*_` + "`" + `-]+|(?:please|pls|kindly|ok(?:ay)?|so|and|also|now|then|next|alright|great|thanks|go ahead and|can you|could you|would you|will you|let'?s|let us|i want you to|i'd like you to|i need you to|we need to|you need to|need to|help me|try to|you should)\b[\s,]*|(?:请|帮我|麻烦|你|再|也|先|然后|现在|接着|那就|给我|我们|好的|好|谢谢)[\s，,]*)`)
})

// RequestKind says whether a user's request commits to new work (seed 000, 1.5), by the verb
// it starts with once quotes and politeness ("please", "can you", "请", "帮我") are set aside.
// A request that ends with a question mark and names no committing verb is inspecting; one
// that is neither is unsure.
func RequestKind(request string) string {
	s := strings.TrimSpace(request)
	for {
		loc := requestLead().FindStringIndex(s)
		if loc == nil || loc[1] == 0 {
			break
		}
		s = s[loc[1]:]
	}
	low := strings.ToLower(s)
	starts := func(words []string) bool {
		for _, w := range words {
			if strings.HasPrefix(low, w) && (len(low) == len(w) || !isASCIIWordByte(low[len(w)]) || !isASCIIWordByte(w[len(w)-1])) {
				return true
			}
		}
		return false
	}
	switch {
	case starts(CommittingVerbs):
		return RequestCommitting
	case starts(InspectingVerbs), strings.HasSuffix(strings.TrimRight(s, `"'”’」』 `), "?"), strings.HasSuffix(strings.TrimRight(s, `"'”’」』 `), "？"):
		return RequestInspecting
	}
	return RequestUnsure
}

func isASCIIWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}
