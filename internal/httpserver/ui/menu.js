// menu.js: a popup menu of actions under a button, driven by the mouse
// or the keyboard (arrows, Home/End, Enter, Escape, Tab).
let openOne = null; // {el, button, close}

// openMenu shows items ({label, run}) under button; choosing one closes
// the menu and runs it. The button's aria-expanded follows.
export function openMenu(button, items) {
  if (openOne) {
    const same = openOne.button === button;
    openOne.close(false);
    if (same) return; // a second click closes it
  }
  const el = document.createElement('div');
  el.className = 'menu';
  el.setAttribute('role', 'menu');
  el.setAttribute('aria-label', button.getAttribute('aria-label') || 'Actions');
  const buttons = items.map((it) => {
    const b = document.createElement('button');
    b.type = 'button';
    b.setAttribute('role', 'menuitem');
    b.tabIndex = -1;
    b.textContent = it.label;
    b.addEventListener('click', () => {
      close(true);
      it.run();
    });
    return b;
  });
  el.append(...buttons);
  const focusAt = (i) => buttons[(i + buttons.length) % buttons.length].focus();
  el.addEventListener('keydown', (e) => {
    const i = buttons.indexOf(document.activeElement);
    switch (e.key) {
      case 'ArrowDown': focusAt(i + 1); break;
      case 'ArrowUp': focusAt(i - 1); break;
      case 'Home': focusAt(0); break;
      case 'End': focusAt(-1); break;
      case 'Escape': close(true); break;
      case 'Tab': close(false); return;
      default: return;
    }
    e.preventDefault();
  });
  const outside = (e) => {
    if (!el.contains(e.target) && e.target !== button) close(false);
  };
  function close(refocus) {
    document.removeEventListener('mousedown', outside);
    el.remove();
    button.setAttribute('aria-expanded', 'false');
    openOne = null;
    if (refocus) button.focus();
  }
  button.after(el);
  button.setAttribute('aria-expanded', 'true');
  document.addEventListener('mousedown', outside);
  openOne = { el, button, close };
  focusAt(0);
}
