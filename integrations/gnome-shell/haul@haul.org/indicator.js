// The top bar's button and its menu: draws the view of model.js and turns clicks into calls of the client.

import Gio from 'gi://Gio';
import GLib from 'gi://GLib';
import GObject from 'gi://GObject';
import St from 'gi://St';

import * as PanelMenu from 'resource:///org/gnome/shell/ui/panelMenu.js';
import * as PopupMenu from 'resource:///org/gnome/shell/ui/popupMenu.js';

/** Haul's own busy icon when it is installed, else the theme's network activity icon. */
const ICON_NAMES = ['haul-busy-symbolic', 'haul-busy', 'network-transmit-receive-symbolic'];

/**
 * Shows the user's download folder in the default file manager, as hauld's tray menu does; made first (0700, as
 * hauld makes it) when it does not exist yet.
 */
function openDownloadsFolder() {
    const folder = GLib.get_user_special_dir(GLib.UserDirectory.DIRECTORY_DOWNLOAD) ??
        GLib.build_filenamev([GLib.get_home_dir(), 'Downloads']);
    GLib.mkdir_with_parents(folder, 0o700);
    const uri = Gio.File.new_for_path(folder).get_uri();
    Gio.AppInfo.launch_default_for_uri_async(uri, global.create_app_launch_context(0, -1), null, (_, result) => {
        try {
            Gio.AppInfo.launch_default_for_uri_finish(result);
        } catch (error) {
            console.warn(`Haul: cannot open ${folder}: ${error.message}`);
        }
    });
}

export const HaulIndicator = GObject.registerClass(
class HaulIndicator extends PanelMenu.Button {
    /** `client` is the HaulClient whose calls the menu's items make. */
    _init(client) {
        super._init(0.0, 'Haul');
        this._client = client;
        this.add_child(new St.Icon({
            gicon: new Gio.ThemedIcon({names: ICON_NAMES}),
            style_class: 'system-status-icon',
        }));
        // Every item the menu holds, by the labels that lead to it ("Suspend all"; "debian.iso", "Cancel"),
        // with whether it can be used: what describe() reports and activateItem() finds.
        this._entries = new Map();
        this._rows = new Map();
        this._view = null;

        this._status = new PopupMenu.PopupMenuItem('', {reactive: false});
        this.menu.addMenuItem(this._status);
        this._rowSection = new PopupMenu.PopupMenuSection();
        this.menu.addMenuItem(this._rowSection);
        this.menu.addMenuItem(new PopupMenu.PopupSeparatorMenuItem());
        this._suspendAll = this._action(this.menu, ['Suspend all'], () => client.callManager('SuspendAll'));
        this._resumeAll = this._action(this.menu, ['Resume all'], () => client.callManager('ResumeAll'));
        this._cancelAll = this._action(this.menu, ['Cancel all'], () => client.callManager('CancelAll'));
        this._limitMenu = new PopupMenu.PopupSubMenuMenuItem('Download limit');
        this.menu.addMenuItem(this._limitMenu);
        this._entries.set(JSON.stringify(['Download limit']), {item: this._limitMenu, enabled: true});
        this._limitItems = [];
        this.menu.addMenuItem(new PopupMenu.PopupSeparatorMenuItem());
        this._action(this.menu, ['Open downloads folder'], openDownloadsFolder);

        // Opening the menu asks hauld again: a hauld that does not answer greys it.
        this.menu.connect('open-state-changed', (_, open) => {
            if (open)
                client.refresh();
        });
        this.update(null);
    }

    /** Adds an item under `labels` (its own label last) to `menu`, calling `callback` when activated. */
    _action(menu, labels, callback) {
        const item = new PopupMenu.PopupMenuItem(labels[labels.length - 1]);
        item.connect('activate', () => callback());
        menu.addMenuItem(item);
        this._entries.set(JSON.stringify(labels), {item, enabled: true});
        return item;
    }

    _setEnabled(item, labels, enabled) {
        item.setSensitive(enabled);
        this._entries.get(JSON.stringify(labels)).enabled = enabled;
    }

    /** Draws `view` (model.js's menuView; null before hauld is known). */
    update(view) {
        this._view = view;
        this.visible = view?.iconVisible ?? false;
        if (!this.visible)
            this.menu.close();
        this._status.label.text = view?.status ?? '';
        this._status.visible = Boolean(view?.status);
        this._showRows(view?.rows ?? []);
        this._setEnabled(this._suspendAll, ['Suspend all'], view?.suspendAll ?? false);
        this._setEnabled(this._resumeAll, ['Resume all'], view?.resumeAll ?? false);
        this._setEnabled(this._cancelAll, ['Cancel all'], view?.cancelAll ?? false);
        this._showLimits(view);
    }

    _showRows(rows) {
        const ids = rows.map(row => row.id);
        for (const [id, drawn] of this._rows) {
            if (!ids.includes(id)) {
                drawn.item.destroy();
                this._rows.delete(id);
            }
        }
        // New rows go below the others (hauld's Ids count up); any other order is drawn again from the start, as
        // moving a row would leave its submenu behind.
        const kept = [...this._rows.keys()];
        if (ids.slice(0, kept.length).join() !== kept.join()) {
            for (const drawn of this._rows.values())
                drawn.item.destroy();
            this._rows.clear();
        }
        for (const [key, entry] of this._entries) {
            if (entry.row !== undefined)
                this._entries.delete(key);
        }
        for (const row of rows) {
            let drawn = this._rows.get(row.id);
            if (!drawn) {
                drawn = this._drawRow(row);
                this._rows.set(row.id, drawn);
            }
            drawn.item.label.text = row.title;
            drawn.detail.label.text = row.detail;
            for (const [name, enabled] of [['Suspend', row.canSuspend], ['Resume', row.canResume],
                ['Cancel', row.canCancel]]) {
                drawn[name].setSensitive(enabled);
                this._entries.set(JSON.stringify([row.name, name]), {item: drawn[name], enabled, row: row.id});
            }
            this._entries.set(JSON.stringify([row.name]), {item: drawn.item, enabled: true, row: row.id});
        }
    }

    /** A transfer's row: its title, opening its detail line and its actions. */
    _drawRow(row) {
        const item = new PopupMenu.PopupSubMenuMenuItem(row.title);
        this._rowSection.addMenuItem(item);
        const detail = new PopupMenu.PopupMenuItem(row.detail, {reactive: false});
        item.menu.addMenuItem(detail);
        const drawn = {item, detail};
        for (const name of ['Suspend', 'Resume', 'Cancel']) {
            drawn[name] = new PopupMenu.PopupMenuItem(name);
            drawn[name].connect('activate', () => this._client.callTask(row.path, name));
            item.menu.addMenuItem(drawn[name]);
        }
        return drawn;
    }

    _showLimits(view) {
        const limits = view?.limits ?? [];
        this._limitMenu.label.text = view?.limitTitle ?? 'Download limit';
        const enabled = view?.limitsEnabled ?? false;
        this._limitMenu.setSensitive(enabled);
        this._entries.get(JSON.stringify(['Download limit'])).enabled = enabled;
        if (this._limitItems.map(entry => entry.value).join() !== limits.map(limit => limit.value).join()) {
            for (const {item, label} of this._limitItems) {
                item.destroy();
                this._entries.delete(JSON.stringify(['Download limit', label]));
            }
            this._limitItems = limits.map(({value, label}) => {
                const item = new PopupMenu.PopupMenuItem(label);
                item.connect('activate', () => this._client.setDownloadLimit(value));
                this._limitMenu.menu.addMenuItem(item);
                this._entries.set(JSON.stringify(['Download limit', label]), {item, enabled: true});
                return {item, value, label};
            });
        }
        limits.forEach(({selected}, index) => {
            const {item} = this._limitItems[index];
            item.setOrnament(selected ? PopupMenu.Ornament.DOT : PopupMenu.Ornament.NONE);
            Object.assign(this._entries.get(JSON.stringify(['Download limit', item.label.text])), {selected, enabled});
        });
    }

    /** What the menu holds now, for the test hook. */
    describe() {
        const items = [];
        for (const [key, entry] of this._entries) {
            items.push({
                labels: JSON.parse(key), label: entry.item.label.text, enabled: entry.enabled,
                ...entry.selected === undefined ? {} : {selected: entry.selected},
            });
        }
        // A hidden button has no place on the screen (NaN): 0 then.
        const [x, y, width, height] = [...this.get_transformed_position(), ...this.get_transformed_size()]
            .map(value => Number.isFinite(value) ? value : 0);
        return {
            button: {x, y, width, height},
            iconVisible: this.visible, menuOpen: this.menu.isOpen, greyed: this._view?.greyed ?? false,
            status: this._view?.status ?? null, rows: this._view?.rows ?? [], items,
        };
    }

    /** Activates the item `labels` lead to, as a click does; false when there is none or it is greyed. */
    activateItem(labels) {
        const entry = this._entries.get(JSON.stringify(labels));
        if (!entry || !entry.enabled)
            return false;
        entry.item.activate(null);
        return true;
    }
});
