// Stands in for GNOME Shell's resource:///org/gnome/shell/ui/panelMenu.js in tests.js: a GObject class, as the
// real Button is (the extension registers a subclass), holding a stub menu.
import GObject from 'gi://GObject';

import {PopupMenuSection} from './popupMenu.js';

export const Button = GObject.registerClass({
    Signals: {'destroy': {}},
}, class Button extends GObject.Object {
    _init(menuAlignment, nameText) {
        super._init();
        this.nameText = nameText;
        this.menu = new PopupMenuSection();
        this.children = [];
        this.visible = true;
        this.destroyed = false;
    }

    get_transformed_position() {
        return [1000, 0];
    }

    get_transformed_size() {
        return this.visible ? [40, 32] : [NaN, NaN];
    }

    add_child(child) {
        this.children.push(child);
    }

    destroy() {
        this.destroyed = true;
        this.emit('destroy');
    }
});
