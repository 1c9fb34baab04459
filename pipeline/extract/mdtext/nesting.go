package mdtext

import (
	"reflect"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// maxNesting bounds how many block quotes and lists a block may sit in.
// goldmark's block parsing costs, per line, the number of containers open
// times the line's offset into them, so a million nested quotes take
// many minutes; real documents nest a handful deep. Past the bound a
// quote or list marker is not opened and stays in the text of the block
// it starts.
const maxNesting = 32

// blockParsers are goldmark's default block parsers, with the block quote
// and list parsers bounded by maxNesting. Both parses (gathering
// definitions and rendering) use them, so both see the same blocks.
func blockParsers() []util.PrioritizedValue {
	bounded := map[reflect.Type]bool{
		reflect.TypeOf(parser.NewBlockquoteParser()): true,
		reflect.TypeOf(parser.NewListParser()):       true,
	}
	ps := parser.DefaultBlockParsers()
	for i, p := range ps {
		if bounded[reflect.TypeOf(p.Value)] {
			ps[i].Value = nestingBound{p.Value.(parser.BlockParser)}
		}
	}
	return ps
}

// nestingBound is a container's block parser that opens no container
// maxNesting deep.
type nestingBound struct{ parser.BlockParser }

func (b nestingBound) Open(parent ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	if nesting(parent) >= maxNesting {
		return nil, parser.NoChildren
	}
	return b.BlockParser.Open(parent, reader, pc)
}

// maxOpenBrackets bounds the "[" (and "![") a paragraph may hold open,
// not yet matched by a "]": goldmark keeps half a kilobyte for each, so a
// million unclosed took 500 MB. Past the bound a "[" stays text.
const maxOpenBrackets = 4096

// inlineParsers are goldmark's default inline parsers, with the link
// parser bounded by maxOpenBrackets.
func inlineParsers() []util.PrioritizedValue {
	link := reflect.TypeOf(parser.NewLinkParser())
	ps := parser.DefaultInlineParsers()
	for i, p := range ps {
		if reflect.TypeOf(p.Value) == link {
			ps[i].Value = bracketBound{p.Value.(linkParser)}
		}
	}
	return ps
}

// linkParser is goldmark's link parser: an inline parser that drops, at
// the end of each block, the brackets left open in it.
type linkParser interface {
	parser.InlineParser
	parser.CloseBlocker
}

// bracketBound is the link parser opening no bracket while
// maxOpenBrackets are open in the block, as counted under openBrackets.
type bracketBound struct{ linkParser }

var openBrackets = parser.NewContextKey()

func (b bracketBound) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	line, _ := block.PeekLine()
	opens := line[0] == '[' || len(line) > 1 && line[0] == '!' && line[1] == '['
	open, _ := pc.Get(openBrackets).(int)
	if opens && open >= maxOpenBrackets {
		return nil
	}
	n := b.linkParser.Parse(parent, block, pc)
	switch {
	case opens && n != nil:
		open++
	case line[0] == ']' && open > 0: // closes the last open bracket, or drops it
		open--
	}
	pc.Set(openBrackets, open)
	return n
}

func (b bracketBound) CloseBlock(parent ast.Node, block text.Reader, pc parser.Context) {
	pc.Set(openBrackets, 0)
	b.linkParser.CloseBlock(parent, block, pc)
}

// nesting counts the block quotes and lists n is, or is in.
func nesting(n ast.Node) int {
	depth := 0
	for ; n != nil; n = n.Parent() {
		switch n.(type) {
		case *ast.Blockquote, *ast.List:
			depth++
		}
	}
	return depth
}
