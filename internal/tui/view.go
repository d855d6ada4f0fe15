package tui

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/seed1cedbf7c/ckpt"
)

type styles struct {
	title, dim, sel, heading, create, update, del, warn, err lipgloss.Style
}

// newStyles returns the picker's styles. Its colours are the terminal's
// first eight, which its theme makes readable on its own background, so
// the picker never asks the terminal which background it has.
func newStyles() styles {
	return styles{
		title:   lipgloss.NewStyle().Bold(true),
		dim:     lipgloss.NewStyle().Faint(true),
		sel:     lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("6")),
		heading: lipgloss.NewStyle().Bold(true),
		create:  lipgloss.NewStyle().Foreground(lipgloss.Color("2")),
		update:  lipgloss.NewStyle().Foreground(lipgloss.Color("3")),
		del:     lipgloss.NewStyle().Foreground(lipgloss.Color("1")),
		warn:    lipgloss.NewStyle().Foreground(lipgloss.Color("3")),
		err:     lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("1")),
	}
}

// View renders the picker at its window's size, on the alternate screen.
func (m *Model) View() tea.View {
	v := tea.NewView(m.content())
	v.AltScreen = true
	return v
}

// content is the picker's screen at its window's size.
func (m *Model) content() string {
	var body []string
	var footer string
	switch m.state {
	case stateLoading:
		body = append(m.header(), "", "Loading the session's turns…")
		footer = "q quit"
	case stateList:
		body, footer = m.listView()
	case stateMenu:
		body, footer = m.menuView()
	case stateBusy:
		body = append(m.header(), "", m.busyText())
		footer = "ctrl+c stop"
		if m.cancelling {
			footer = "stopping…"
		}
	case stateEmpty:
		id := m.ctl.ID()
		body = append(m.header(), "")
		body = append(body, m.wrap(fmt.Sprintf("Session %s has no turns yet: there is nothing to rewind.", clean(id)))...)
		body = append(body, "")
		body = append(body, m.wrap("Turns begin with `ckpt turn begin -m PROMPT` (agent hooks begin them by themselves).")...)
		footer = "press any key to exit"
	case stateFailed:
		body = append(m.header(), "")
		for _, l := range m.wrap("Error: " + m.err.Error()) {
			body = append(body, m.st.err.Render(l))
		}
		if h := ckpt.Hint(m.err); h != "" {
			body = append(body, m.wrap("hint: "+h)...)
		}
		footer = "press any key to exit"
	case stateDone:
		return ""
	}
	return m.fit(body, m.st.dim.Render(footer))
}

// fit cuts the view to the window: lines truncated to its width, the body
// to its height, the footer on the last line.
func (m *Model) fit(body []string, footer string) string {
	w, h := max(m.width, 1), max(m.height, 1)
	if len(body) > h-1 {
		body = body[:max(h-1, 0)]
	}
	for len(body) < h-1 {
		body = append(body, "")
	}
	lines := append(body, footer)
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, w, "…")
	}
	return strings.Join(lines, "\n")
}

// wrap word-wraps plain text to the window's width.
func (m *Model) wrap(s string) []string {
	return strings.Split(ansi.Wrap(s, max(m.width, 1), ""), "\n")
}

func (m *Model) header() []string {
	h := m.st.title.Render("ckpt rewind") + m.st.dim.Render(" · session "+clean(m.ctl.ID()))
	if m.session != nil && m.session.Title != "" {
		h += m.st.dim.Render(" · " + promptLine(m.session.Title))
	}
	return []string{h}
}

func (m *Model) keepLabel() string {
	if m.keep {
		return "u keep user edits: on"
	}
	return "u keep user edits: off"
}

func (m *Model) timeFormat() string {
	if m.width < 64 {
		return "01-02 15:04"
	}
	return "2006-01-02 15:04:05"
}

func (m *Model) listView() ([]string, string) {
	body := m.header()
	q := "Rewind to the start of which turn?"
	if m.width < 64 {
		q = "Which turn?"
	}
	q += " (newest first)"
	rows := m.listRows()
	if len(m.turns) > rows {
		q = strings.TrimSuffix(q, ")") + fmt.Sprintf("; %d-%d of %d)", m.offset+1, min(m.offset+rows, len(m.turns)), len(m.turns))
	}
	body = append(body, q, "")
	// Columns as wide as their widest cell.
	nw, sw := 0, 0
	states := make([]string, len(m.turns))
	for i, t := range m.turns {
		states[i] = ckpt.FormatTurnFiles(t.Files)
		if t.Open {
			states[i] = "in progress"
		}
		nw, sw = max(nw, len(strconv.Itoa(t.N))), max(sw, len(states[i]))
	}
	for i := m.offset; i < len(m.turns) && i < m.offset+rows; i++ {
		t := m.turns[i]
		row := fmt.Sprintf("%*d  %s  %-*s  %s", nw, t.N, t.Time.In(m.opts.Location).Format(m.timeFormat()), sw, states[i], promptLine(t.Prompt))
		if i == m.cursor {
			body = append(body, m.st.sel.Render("> "+row))
		} else {
			body = append(body, "  "+row)
		}
	}
	footer := "↑/↓ move · enter choose · " + m.keepLabel() + " · esc esc quit"
	if m.escHint {
		footer = "press Esc again to quit"
	}
	return body, footer
}

func (m *Model) menuView() ([]string, string) {
	t := m.turns[m.cursor]
	// On a short window the menu drops its blank lines and gives the
	// prompt no line of its own, so that the preview keeps some room.
	compact := m.height < 22
	body := m.header()
	if !compact {
		body = append(body, "")
	}
	state := ckpt.FormatTurnFiles(t.Files)
	if t.Open {
		state = "in progress, so far " + state
	}
	line := m.st.heading.Render(fmt.Sprintf("Turn %d", t.N)) + fmt.Sprintf(" · %s · %s", t.Time.In(m.opts.Location).Format(m.timeFormat()), state)
	if compact {
		body = append(body, line+" · "+promptLine(t.Prompt))
	} else {
		body = append(body, line, "  "+promptLine(t.Prompt), "")
	}
	if compact && m.height-len(body)-int(numItems)-1 < minPreviewRows {
		body = append(body, m.menuRows()...)
	} else {
		for it := Item(0); it < numItems; it++ {
			body = append(body, m.menuCell(it))
		}
	}
	// What the highlighted action will change, in the rows left above the
	// footer (and the blank line before it).
	room := m.height - len(body) - 1
	if !compact {
		body = append(body, "")
		room -= 2
	}
	body = append(body, m.previewLines(t, max(room, 1), !compact)...)

	footer := "enter " + m.verb() + " · ↑/↓ choose · " + m.keepLabel() + " · esc back"
	switch p := m.currentPreview(); {
	case m.item == ItemCancel:
		footer = "enter quit, changing nothing · ↑/↓ choose · esc back"
	case p == nil || m.computing != nil:
		footer = "computing what would change… · ↑/↓ choose · esc back"
	case p.err != nil:
		footer = "↑/↓ choose · esc back"
	}
	return body, footer
}

// minPreviewRows is the room a short window keeps for the preview: with
// less, the menu lists its actions side by side rather than one a line.
const minPreviewRows = 3

// menuCell is an action as the menu shows it, the highlighted one marked.
func (m *Model) menuCell(it Item) string {
	if it == m.item {
		return m.st.sel.Render("> " + it.String())
	}
	return "  " + it.String()
}

// menuRows lays the actions out side by side, in rows as wide as the
// window.
func (m *Model) menuRows() []string {
	var rows []string
	row, w := "", 0
	for it := Item(0); it < numItems; it++ {
		cw := 2 + len(it.String())
		if w > 0 && w+1+cw > m.width {
			rows = append(rows, row)
			row, w = "", 0
		}
		if w > 0 {
			row += " "
			w++
		}
		row += m.menuCell(it)
		w += cw
	}
	return append(rows, row)
}

func (m *Model) verb() string {
	switch {
	case m.item == ItemFork:
		return "fork"
	case m.item.Direction() != "":
		return "summarize"
	}
	return "rewind"
}

func (m *Model) busyText() string {
	t := m.result.Turn
	switch m.result.Item {
	case ItemFork:
		return fmt.Sprintf("Forking a new session from turn %d…", t)
	case ItemConversation:
		return fmt.Sprintf("Rewinding the conversation to before turn %d…", t)
	case ItemCode:
		return fmt.Sprintf("Rewinding the code to the start of turn %d…", t)
	case ItemSummarizeFrom, ItemSummarizeUpto:
		what := fmt.Sprintf("turn %d and every later turn", t)
		if m.result.Item == ItemSummarizeUpto {
			what = fmt.Sprintf("every turn up to turn %d", t)
		}
		if p := m.previews[previewKey{turn: t, item: m.result.Item}]; p != nil && p.summary != nil {
			what = turnRange(p.summary.first(), p.summary.last())
			if p.summary.summarizer != "" {
				return fmt.Sprintf("Summarizing %s: running %s…", what, printable(p.summary.summarizer))
			}
		}
		return fmt.Sprintf("Summarizing %s…", what)
	}
	return fmt.Sprintf("Rewinding code and conversation to the start of turn %d…", t)
}

// previewLines says what the highlighted action will change, in at most
// room lines.
func (m *Model) previewLines(t ckpt.TurnInfo, room int, heading bool) []string {
	var out []string
	if heading {
		out = append(out, m.st.heading.Render("What it will change"))
	}
	if m.item == ItemCancel {
		return append(out, m.wrap("Nothing: the picker closes and the session and its files stay as they are.")...)
	}
	p := m.currentPreview()
	if p == nil {
		return append(out, m.st.dim.Render("computing…"))
	}
	if p.err != nil {
		out = append(out, m.styleLines(m.st.err, m.wrap("Cannot tell: "+p.err.Error()))...)
		if h := ckpt.Hint(p.err); h != "" {
			out = append(out, m.wrap("hint: "+h)...)
		}
		return out
	}
	// In little room, say it in fewer words: the files count most.
	short := room < 8
	if p.summary != nil {
		return append(out, m.summaryLines(p.summary, room-len(out), short)...)
	}
	r := p.rewind
	var text []string // descriptive lines, before the files
	var after []string
	switch m.item {
	case ItemFork:
		if short {
			text = append(text, m.wrap(fmt.Sprintf("Fork: a new session and branch from turn %d.", t.N))...)
		} else {
			text = append(text, m.wrap(fmt.Sprintf("Fork: a new session with the conversation before turn %d (%d message(s)), on a new branch.", t.N, p.forkMessages))...)
		}
	case ItemConversation, ItemBoth:
		last := r.Turn + r.Turns - 1
		turns := fmt.Sprintf("turn %d", r.Turn)
		if last > r.Turn {
			turns = fmt.Sprintf("turns %d-%d", r.Turn, last)
		}
		if short {
			text = append(text, m.wrap(fmt.Sprintf("Conversation: %d message(s) leave it.", r.Messages))...)
			break
		}
		text = append(text, m.wrap(fmt.Sprintf("Conversation: %d message(s) of %s leave it (kept, hidden).", r.Messages, turns))...)
		text = append(text, m.wrap("Its prompt comes back, to send again:")...)
		text = append(text, "  "+m.st.dim.Render(promptLine(r.Prompt)))
	}
	var files []string
	if rr := r.Restore; rr != nil {
		n := len(rr.Changed())
		what := "Code"
		if m.item == ItemFork {
			what = "Workspace"
		}
		switch {
		case n == 0 && len(rr.Actions) == 0:
			text = append(text, m.wrap(fmt.Sprintf("%s: nothing to change; the files are as they were at the start of turn %d.", what, t.N))...)
		case short:
			text = append(text, m.wrap(fmt.Sprintf("%s: %d file(s) to change:", what, n))...)
		case m.keep && m.item != ItemFork:
			text = append(text, m.wrap(fmt.Sprintf("%s: undo what turn %d and later changed, keeping edits made between turns; %d file(s) to change:", what, t.N, n))...)
		default:
			text = append(text, m.wrap(fmt.Sprintf("%s: back to the start of turn %d, %d file(s) to change:", what, t.N, n))...)
		}
		for _, a := range rr.Actions {
			files = append(files, m.actionLine(a))
		}
		conflict := map[ckpt.Path]bool{}
		for _, p := range r.Conflicts {
			conflict[p] = true
		}
		var merged []ckpt.Path
		for _, p := range r.Kept {
			if !conflict[p] {
				merged = append(merged, p)
			}
		}
		if len(merged) > 0 {
			after = append(after, m.styleLines(m.st.warn, m.wrap("Merged with your edits: "+joinPaths(merged)))...)
		}
		if len(r.Conflicts) > 0 {
			after = append(after, m.styleLines(m.st.warn, m.wrap("Conflicts, your side kept: "+joinPaths(r.Conflicts)))...)
		}
		if len(r.Shared) > 0 {
			after = append(after, m.styleLines(m.st.warn, m.wrap("Kept, another session changed them at the same time: "+joinPaths(r.Shared)))...)
		}
		switch {
		case short:
		case m.item == ItemFork:
			after = append(after, m.st.dim.Render("This session and its branch stay as they are: ckpt switch goes back."))
		case n > 0 && m.item == ItemBoth:
			after = append(after, m.st.dim.Render("The files before are checkpointed: ckpt undo takes the code back (not the conversation)."))
		case n > 0:
			after = append(after, m.st.dim.Render("The state before is checkpointed: ckpt undo takes it back."))
		}
	}
	out = append(out, text...)
	left := room - len(out) - len(after)
	if len(files) > left && len(after) > 0 {
		// The files first: the notes below them go.
		after = nil
		left = room - len(out)
	}
	if len(files) > left {
		keep := max(0, left-1)
		more := fmt.Sprintf("  … and %d more", len(files)-keep)
		if keep == 0 {
			more = "  … (a taller window lists them)"
		}
		files = append(files[:keep:keep], m.st.dim.Render(more))
	}
	out = append(out, files...)
	return append(out, after...)
}

// summaryLines says what a summary will replace, in at most room lines:
// the turns (listed as the list shows them), then what stays the same.
func (m *Model) summaryLines(p *summaryPreview, room int, short bool) []string {
	var text, turns, after []string
	become := "become"
	if len(p.turns) == 1 {
		become = "becomes"
	}
	if short {
		text = m.wrap(fmt.Sprintf("Summary: %s %s one message:", turnRange(p.first(), p.last()), become))
	} else {
		text = m.wrap(fmt.Sprintf("Summary: %s (%d message(s)) %s one summary message, in turn %d:",
			turnRange(p.first(), p.last()), p.messages, become, p.first()))
	}
	nw := len(strconv.Itoa(p.last()))
	for _, t := range p.turns {
		turns = append(turns, fmt.Sprintf("  %*d  %s", nw, t.N, promptLine(t.Prompt)))
	}
	if !short {
		switch {
		case p.later == 1:
			after = append(after, m.wrap(fmt.Sprintf("Turn %d becomes turn %d.", p.last()+1, p.first()+1))...)
		case p.later > 1:
			after = append(after, m.wrap(fmt.Sprintf("Turns %d-%d become turns %d-%d.", p.last()+1, p.last()+p.later, p.first()+1, p.first()+p.later))...)
		}
		if p.summarizer == "" {
			after = append(after, m.wrap("The built-in summarizer writes it (offline: per turn, its prompt, the files it changed and how it ended).")...)
		} else {
			after = append(after, m.wrap("Your summarizer writes it, on Enter: "+printable(p.summarizer))...)
		}
		after = append(after, m.styleLines(m.st.dim, m.wrap(fmt.Sprintf(
			"The files stay as they are; the messages are kept, hidden (ckpt session show --all); rewinding to turn %d still works.", p.first())))...)
	}
	left := room - len(text) - len(after)
	if len(turns) > left && len(after) > 0 {
		// The turns first: the notes below them go.
		after = nil
		left = room - len(text)
	}
	if len(turns) > left {
		keep := max(0, left-1)
		turns = append(turns[:keep:keep], m.st.dim.Render(fmt.Sprintf("  … and %d more", len(turns)-keep)))
	}
	return append(append(text, turns...), after...)
}

// turnRange names turns first to last: "turn 2", "turns 2-5".
func turnRange(first, last int) string {
	if first == last {
		return fmt.Sprintf("turn %d", first)
	}
	return fmt.Sprintf("turns %d-%d", first, last)
}

func (m *Model) styleLines(s lipgloss.Style, lines []string) []string {
	for i, l := range lines {
		lines[i] = s.Render(l)
	}
	return lines
}

func (m *Model) actionLine(a ckpt.Action) string {
	op := fmt.Sprintf("%-6s", a.Op)
	switch a.Op {
	case "create":
		op = m.st.create.Render(op)
	case "update":
		op = m.st.update.Render(op)
	case "delete":
		op = m.st.del.Render(op)
	}
	line := "  " + op + " " + clean(string(a.Path))
	if a.Reason != "" {
		line += m.st.dim.Render(" (" + a.Reason + ")")
	}
	return line
}

func joinPaths(ps []ckpt.Path) string {
	var s []string
	for _, p := range ps {
		s = append(s, clean(string(p)))
	}
	return strings.Join(s, ", ")
}

// promptLine is the first non-empty line of a prompt, safe to print.
func promptLine(s string) string {
	s = strings.TrimSpace(s)
	first, rest, _ := strings.Cut(s, "\n")
	first = strings.TrimSpace(first)
	if rest != "" {
		first += " …"
	}
	return printable(first)
}

// printable replaces control characters (a prompt could hold escape
// sequences) so that nothing but text reaches the terminal.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\t' {
			return ' '
		}
		if unicode.IsControl(r) || r == utf8.RuneError {
			return '?'
		}
		return r
	}, s)
}

// clean shows a path or id quoted, as git does, when it holds control
// characters or invalid UTF-8.
func clean(s string) string {
	if !utf8.ValidString(s) || strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return strconv.Quote(s)
	}
	return s
}
