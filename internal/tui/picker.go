package tui

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/seed1cedbf7c/ckpt"
)

// Item is an entry of the action menu.
type Item int

// The action menu, in the order it lists them (Claude Code's, as
// Reasonix has it).
const (
	ItemBoth          Item = iota // [code+conversation]
	ItemConversation              // [conversation]
	ItemCode                      // [code]
	ItemFork                      // [fork from here]
	ItemSummarizeFrom             // [summarize from here]
	ItemSummarizeUpto             // [summarize up to here]
	ItemCancel                    // [cancel]
	numItems
)

var itemLabels = [numItems]string{
	"[code+conversation]", "[conversation]", "[code]", "[fork from here]",
	"[summarize from here]", "[summarize up to here]", "[cancel]",
}

// String returns the item's label as the menu shows it.
func (it Item) String() string {
	if it < 0 || it >= numItems {
		return fmt.Sprintf("Item(%d)", int(it))
	}
	return itemLabels[it]
}

// Scope returns the rewind scope of a rewind item ("" for the others).
func (it Item) Scope() ckpt.Scope {
	switch it {
	case ItemBoth:
		return ckpt.ScopeBoth
	case ItemConversation:
		return ckpt.ScopeConversation
	case ItemCode:
		return ckpt.ScopeCode
	}
	return ""
}

// Direction returns the direction of a summarize item ("" for the others).
func (it Item) Direction() ckpt.Direction {
	switch it {
	case ItemSummarizeFrom:
		return ckpt.SummarizeFrom
	case ItemSummarizeUpto:
		return ckpt.SummarizeUpto
	}
	return ""
}

// keeps reports whether the keep-user-edits toggle applies to the item.
func (it Item) keeps() bool { return it == ItemBoth || it == ItemCode }

// EscInterval is how soon a second Esc must follow the first for the
// list to quit (Esc Esc).
const EscInterval = time.Second

// Options configure the picker.
type Options struct {
	// Exact starts the picker with the keep-user-edits toggle off: code
	// rewinds make the whole tree what it was when the turn began. By
	// default they undo only what the agent's turns changed (see
	// [ckpt.RewindOptions]).
	Exact bool
	// Item is the action the menu highlights first (default ItemBoth).
	Item Item
	// Now returns the current time, for the Esc Esc timing (nil: time.Now).
	Now func() time.Time
	// Location is the time zone turn times are shown in (nil: time.Local).
	Location *time.Location
}

// Result reports what the picker did.
type Result struct {
	// Turn is the turn the action was taken on (0: none).
	Turn int
	// Item is the action taken; meaningless when Cancelled.
	Item Item
	// Cancelled: nothing was changed (the user quit or chose cancel, or
	// there was nothing to pick).
	Cancelled bool
	// NoTurns: the session has no turns, so there was nothing to pick.
	NoTurns bool
	// Session is the session picked from (nil if it could not be read).
	Session *ckpt.Session
	// Rewind reports a rewind; Fork a fork; Summary a summary (the text
	// and the turns it replaced).
	Rewind  *ckpt.RewindResult
	Fork    *ckpt.ForkResult
	Summary *ckpt.SummarizeResult
	// Err is the Controller's error, when loading the session or the
	// action failed (the picker showed it first).
	Err error
}

type state int

const (
	stateLoading state = iota
	stateList
	stateMenu
	stateBusy
	stateEmpty
	stateFailed
	stateDone
)

// previewKey names one dry run: the turn, the action, and (for code) the
// keep-user-edits toggle.
type previewKey struct {
	turn int
	item Item
	keep bool
}

// preview is what an action would change.
type preview struct {
	rewind       *ckpt.RewindResult // code and conversation (fork: the code side)
	forkMessages int                // fork: messages the new session keeps
	summary      *summaryPreview    // summarize
	err          error
}

// summaryPreview is what a summary would replace. The summary itself is
// not known before the summarizer runs, which is the action.
type summaryPreview struct {
	turns      []*ckpt.Turn // the turns it replaces, oldest first
	messages   int          // their messages, hidden once summarized
	later      int          // the turns after them (renumbered)
	summarizer string       // the command ("": the built-in summarizer)
}

// first and last are the turns summarized.
func (p *summaryPreview) first() int { return p.turns[0].N }
func (p *summaryPreview) last() int  { return p.turns[len(p.turns)-1].N }

// Messages the model's commands send back.
type (
	loadedMsg struct {
		session *ckpt.Session
		turns   []ckpt.TurnInfo
		err     error
	}
	previewMsg struct {
		key previewKey
		p   *preview
	}
	doneMsg struct {
		rewind  *ckpt.RewindResult
		fork    *ckpt.ForkResult
		summary *ckpt.SummarizeResult
		err     error
	}
	escExpiredMsg struct{ seq int }
)

// inflight tracks the Controller calls running in commands, so that
// [Run] returns only once none is (the caller closes the repository).
type inflight struct {
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

func (f *inflight) start() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return false
	}
	f.wg.Add(1)
	return true
}

func (f *inflight) close() {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	f.wg.Wait()
}

// Model is the picker's Bubble Tea model. Create it with [New]; [Run] runs
// it on a terminal.
type Model struct {
	ctx    context.Context
	cancel context.CancelFunc
	ctl    *ckpt.Controller
	opts   Options
	st     styles
	calls  *inflight

	state   state
	session *ckpt.Session
	turns   []ckpt.TurnInfo // newest first
	cursor  int             // in turns
	offset  int             // first turn row shown
	item    Item
	keep    bool
	width   int
	height  int

	previews map[previewKey]*preview
	// computing is the dry run in flight: the picker makes one Controller
	// call at a time.
	computing *previewKey

	escAt   time.Time
	escSeq  int
	escHint bool

	opCancel   context.CancelFunc
	cancelling bool
	err        error
	result     Result
}

var _ tea.Model = (*Model)(nil)

// New returns the picker for the session ctl drives. It reads nothing yet:
// its Init command loads the turns.
func New(ctx context.Context, ctl *ckpt.Controller, opts Options) *Model {
	ctx, cancel := context.WithCancel(ctx)
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Location == nil {
		opts.Location = time.Local
	}
	if opts.Item < 0 || opts.Item >= numItems {
		opts.Item = ItemBoth
	}
	return &Model{
		ctx: ctx, cancel: cancel, ctl: ctl, opts: opts, st: newStyles(), calls: &inflight{},
		item: opts.Item, keep: !opts.Exact, width: 80, height: 24,
		previews: map[previewKey]*preview{},
	}
}

// Result returns what the picker did (final once it has quit).
func (m *Model) Result() Result { return m.result }

// Close cancels the Controller calls still running and waits for them.
func (m *Model) Close() {
	m.cancel()
	m.calls.close()
}

// Run runs the picker on a terminal (in and out; the alternate screen)
// until the user acts or quits, and returns what it did. Errors of the
// Controller are in the Result (the picker showed them); the error
// returned is the terminal's.
func Run(ctx context.Context, ctl *ckpt.Controller, in io.Reader, out io.Writer, opts Options) (Result, error) {
	m := New(ctx, ctl, opts)
	// The program writes the views' colours in what the terminal can show
	// (none with NO_COLOR or TERM=dumb); the view asks for the alternate
	// screen.
	p := tea.NewProgram(m, tea.WithInput(in), tea.WithOutput(out), tea.WithContext(ctx))
	_, err := p.Run()
	m.Close()
	if err != nil {
		if ctx.Err() != nil {
			return Result{Cancelled: true}, ctx.Err()
		}
		return Result{Cancelled: true}, fmt.Errorf("rewind picker: %w", err)
	}
	return m.result, nil
}

// async runs a Controller call in a command, tracked by m.calls.
func (m *Model) async(fn func() tea.Msg) tea.Cmd {
	calls := m.calls
	return func() tea.Msg {
		if !calls.start() {
			return nil
		}
		defer calls.wg.Done()
		return fn()
	}
}

// Init loads the session's turns.
func (m *Model) Init() tea.Cmd {
	ctx, ctl := m.ctx, m.ctl
	return m.async(func() tea.Msg {
		s, err := ctl.Session(ctx)
		if err != nil {
			return loadedMsg{err: err}
		}
		turns, err := ctl.Checkpoints(ctx)
		return loadedMsg{session: s, turns: turns, err: err}
	})
}

// Update handles a message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.scroll()
	case loadedMsg:
		m.session = msg.session
		m.result.Session = msg.session
		switch {
		case msg.err != nil:
			m.fail(msg.err)
		case len(msg.turns) == 0:
			m.state = stateEmpty
			m.result.NoTurns, m.result.Cancelled = true, true
		default:
			m.turns = make([]ckpt.TurnInfo, len(msg.turns))
			for i, t := range msg.turns {
				m.turns[len(msg.turns)-1-i] = t
			}
			m.state = stateList
			m.scroll()
		}
	case previewMsg:
		m.previews[msg.key] = msg.p
		m.computing = nil
		return m, m.ensurePreview()
	case doneMsg:
		m.opCancel = nil
		if msg.err != nil {
			m.fail(msg.err)
			return m, nil
		}
		m.result.Rewind, m.result.Fork, m.result.Summary = msg.rewind, msg.fork, msg.summary
		m.state = stateDone
		return m, tea.Quit
	case escExpiredMsg:
		if msg.seq == m.escSeq {
			m.escHint = false
		}
	case tea.KeyPressMsg:
		return m.key(msg)
	}
	return m, nil
}

func (m *Model) fail(err error) {
	m.err = err
	m.result.Err = err
	m.result.Cancelled = m.result.Rewind == nil && m.result.Fork == nil && m.result.Summary == nil
	m.state = stateFailed
}

func (m *Model) quit() (tea.Model, tea.Cmd) {
	m.result.Cancelled = true
	m.state = stateDone
	m.cancel() // a dry run still in flight is of no use now
	return m, tea.Quit
}

func (m *Model) key(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	k := msg.String()
	switch m.state {
	case stateLoading:
		if k == "ctrl+c" || k == "q" || msg.Code == tea.KeyEscape {
			return m.quit()
		}
	case stateEmpty, stateFailed:
		// The message was shown; any key closes the picker.
		m.state = stateDone
		return m, tea.Quit
	case stateBusy:
		if k == "ctrl+c" && m.opCancel != nil && !m.cancelling {
			// The engine stops where it is safe: the workspace as it was
			// or as asked, never half-way.
			m.cancelling = true
			m.opCancel()
		}
	case stateList:
		return m.listKey(msg)
	case stateMenu:
		return m.menuKey(msg)
	}
	return m, nil
}

func (m *Model) listKey(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	k := msg.String()
	if msg.Code == tea.KeyEscape {
		now := m.opts.Now()
		// Two Escs read at once arrive as alt+esc.
		if msg.Mod.Contains(tea.ModAlt) || (m.escHint && now.Sub(m.escAt) <= EscInterval) {
			return m.quit()
		}
		m.escAt, m.escHint = now, true
		m.escSeq++
		seq := m.escSeq
		return m, tea.Tick(EscInterval, func(time.Time) tea.Msg { return escExpiredMsg{seq} })
	}
	m.escHint = false
	switch k {
	case "ctrl+c", "q":
		return m.quit()
	case "up", "k":
		m.cursor--
	case "down", "j":
		m.cursor++
	case "home", "g":
		m.cursor = 0
	case "end", "G":
		m.cursor = len(m.turns) - 1
	case "pgup":
		m.cursor -= m.listRows()
	case "pgdown", "space":
		m.cursor += m.listRows()
	case "u":
		m.keep = !m.keep
	case "enter":
		m.state = stateMenu
		m.item = m.opts.Item
		return m, m.ensurePreview()
	}
	m.cursor = max(0, min(m.cursor, len(m.turns)-1))
	m.scroll()
	return m, nil
}

func (m *Model) menuKey(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	if msg.Code == tea.KeyEscape {
		m.state = stateList
		m.escHint = false
		return m, nil
	}
	switch msg.String() {
	case "ctrl+c", "q":
		return m.quit()
	case "up", "k", "left", "h", "shift+tab":
		m.item = max(0, m.item-1)
	case "down", "j", "right", "l", "tab":
		m.item = min(numItems-1, m.item+1)
	case "home", "g":
		m.item = 0
	case "end", "G":
		m.item = numItems - 1
	case "u":
		m.keep = !m.keep
	case "enter":
		if m.item == ItemCancel {
			return m.quit()
		}
		if p := m.currentPreview(); p == nil || p.err != nil || m.computing != nil {
			return m, nil // it acts only once it has shown what it will change
		}
		return m, m.perform()
	}
	return m, m.ensurePreview()
}

// perform runs the highlighted action through the Controller.
func (m *Model) perform() tea.Cmd {
	turn, item, keep := m.turns[m.cursor].N, m.item, m.keep && m.item.keeps()
	ctx, cancel := context.WithCancel(m.ctx)
	m.opCancel, m.cancelling = cancel, false
	m.state = stateBusy
	m.result.Turn, m.result.Item = turn, item
	ctl := m.ctl
	return m.async(func() tea.Msg {
		defer cancel()
		var d doneMsg
		switch {
		case item == ItemFork:
			d.fork, d.err = ctl.Fork(ctx, turn)
		case item.Direction() != "":
			d.summary, d.err = ctl.Summarize(ctx, turn, item.Direction())
		default:
			d.rewind, d.err = ctl.Rewind(ctx, turn, item.Scope(), ckpt.RewindOptions{Exact: !keep})
		}
		return d
	})
}

func (m *Model) previewKey() previewKey {
	return previewKey{turn: m.turns[m.cursor].N, item: m.item, keep: m.keep && m.item.keeps()}
}

func (m *Model) currentPreview() *preview {
	if m.state != stateMenu || m.item == ItemCancel {
		return nil
	}
	return m.previews[m.previewKey()]
}

// ensurePreview starts the dry run of the highlighted action unless it is
// known or another call is in flight (its result starts the next one).
func (m *Model) ensurePreview() tea.Cmd {
	if m.state != stateMenu || m.item == ItemCancel || m.computing != nil {
		return nil
	}
	k := m.previewKey()
	if _, ok := m.previews[k]; ok {
		return nil
	}
	m.computing = &k
	ctx, ctl := m.ctx, m.ctl
	return m.async(func() tea.Msg {
		p := &preview{}
		switch k.item {
		case ItemFork:
			// A fork moves the workspace to the turn's start, as a code
			// rewind does, and keeps the conversation before the turn.
			p.rewind, p.err = ctl.Rewind(ctx, k.turn, ckpt.ScopeCode, ckpt.RewindOptions{DryRun: true})
			if p.err == nil {
				var msgs []*ckpt.Message
				msgs, p.err = ctl.Messages(ctx, false)
				for _, mm := range msgs {
					if mm.Turn < k.turn {
						p.forkMessages++
					}
				}
			}
		case ItemSummarizeFrom, ItemSummarizeUpto:
			p.summary, p.err = previewSummary(ctx, ctl, k.turn, k.item.Direction())
		default:
			p.rewind, p.err = ctl.Rewind(ctx, k.turn, k.item.Scope(), ckpt.RewindOptions{Exact: !k.keep, DryRun: true})
		}
		return previewMsg{key: k, p: p}
	})
}

// previewSummary reads what [ckpt.Controller.Summarize] would replace —
// the turn and every later one (from), or every turn up to it (upto) —
// and which summarizer would write the summary. It runs none: a
// summarizer may be slow or cost money, so it runs only on Enter.
func previewSummary(ctx context.Context, ctl *ckpt.Controller, turn int, dir ckpt.Direction) (*summaryPreview, error) {
	s, err := ctl.Session(ctx)
	if err != nil {
		return nil, err
	}
	if turn < 1 || turn > len(s.Turns) {
		return nil, fmt.Errorf("session %s has no turn %d (it has %d)", s.ID, turn, len(s.Turns))
	}
	p := &summaryPreview{summarizer: ctl.Summarizer()}
	if dir == ckpt.SummarizeFrom {
		p.turns = s.Turns[turn-1:]
	} else {
		p.turns, p.later = s.Turns[:turn], len(s.Turns)-turn
	}
	msgs, err := ctl.Messages(ctx, false)
	if err != nil {
		return nil, err
	}
	for _, msg := range msgs {
		if msg.Turn >= p.first() && msg.Turn <= p.last() {
			p.messages++
		}
	}
	return p, nil
}

// listRows is how many turns the list shows at once.
func (m *Model) listRows() int { return max(1, m.height-5) }

// scroll keeps the cursor's row in view.
func (m *Model) scroll() {
	rows := m.listRows()
	if m.cursor < m.offset {
		m.offset = m.cursor
	}
	if m.cursor >= m.offset+rows {
		m.offset = m.cursor - rows + 1
	}
	m.offset = max(0, min(m.offset, len(m.turns)-rows))
}
