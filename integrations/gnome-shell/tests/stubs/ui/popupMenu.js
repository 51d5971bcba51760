// Stands in for GNOME Shell's resource:///org/gnome/shell/ui/popupMenu.js in tests.js: menus and items as plain
// records with the members the extension uses.
export const Ornament = {NONE: 0, DOT: 1, CHECK: 2, HIDDEN: 3};

class Signals {
    constructor() {
        this._handlers = [];
    }

    connect(name, handler) {
        this._handlers.push({name, handler});
        return this._handlers.length;
    }

    emit(name, ...args) {
        for (const entry of this._handlers.filter(h => h.name === name))
            entry.handler(this, ...args);
    }
}

export class PopupMenuSection extends Signals {
    constructor() {
        super();
        this.items = [];
        this.isOpen = false;
    }

    addMenuItem(item) {
        this.items.push(item);
        item._parent = this;
    }

    open() {
        this.isOpen = true;
        this.emit('open-state-changed', true);
    }

    close() {
        if (this.isOpen)
            this.emit('open-state-changed', false);
        this.isOpen = false;
    }
}

export class PopupBaseMenuItem extends Signals {
    constructor(params = {}) {
        super();
        this.reactive = params.reactive ?? true;
        this.sensitive = true;
        this.visible = true;
        this.ornament = Ornament.NONE;
        this.destroyed = false;
    }

    setSensitive(sensitive) {
        this.sensitive = sensitive;
    }

    setOrnament(ornament) {
        this.ornament = ornament;
    }

    activate(event) {
        this.emit('activate', event);
    }

    destroy() {
        this.destroyed = true;
        this._parent?.items.splice(this._parent.items.indexOf(this), 1);
    }
}

export class PopupMenuItem extends PopupBaseMenuItem {
    constructor(text, params) {
        super(params);
        this.label = {text};
    }
}

export class PopupSeparatorMenuItem extends PopupBaseMenuItem {}

export class PopupSubMenuMenuItem extends PopupMenuItem {
    constructor(text) {
        super(text);
        this.menu = new PopupMenuSection();
    }
}
