// A test hook, not a feature: with HAUL_SHELL_TEST_BUS=1 in gnome-shell's environment, the extension exports this
// small interface on the shell's session connection (org.gnome.Shell), so that tests in a real headless shell can
// read the menu and click its items. org.gnome.Shell.Eval is closed since GNOME 41.
//
//   Describe() -> s json        what the button and its menu show (indicator.js describe())
//   OpenMenu(), CloseMenu()     open or close the menu, as a click on the button does
//   Activate(as labels) -> b    activate the item the labels lead to (["Suspend all"], ["debian.iso", "Cancel"],
//                               ["Download limit", "1 MiB/s"]); false when there is none or it is greyed
//   Banners() -> s json         the shell's banners: {"startingUp": b, "shown": "title: body" or null,
//                               "queued": ["title: body"]}; the shell queues its own when its start-up completes

import Gio from 'gi://Gio';

import * as Main from 'resource:///org/gnome/shell/ui/main.js';

const PATH = '/org/gnome/Shell/Extensions/Haul';
const INTERFACE = `<node>
  <interface name="org.haul.ShellExtension.TestHook">
    <method name="Describe"><arg name="json" type="s" direction="out"/></method>
    <method name="OpenMenu"/>
    <method name="CloseMenu"/>
    <method name="Activate">
      <arg name="labels" type="as" direction="in"/>
      <arg name="activated" type="b" direction="out"/>
    </method>
    <method name="Banners"><arg name="json" type="s" direction="out"/></method>
  </interface>
</node>`;

export class TestHook {
    constructor(indicator) {
        this._indicator = indicator;
        this._object = Gio.DBusExportedObject.wrapJSObject(INTERFACE, this);
        this._object.export(Gio.DBus.session, PATH);
    }

    destroy() {
        this._object.unexport();
        this._object = null;
    }

    Describe() {
        return JSON.stringify(this._indicator.describe());
    }

    OpenMenu() {
        this._indicator.menu.open();
    }

    CloseMenu() {
        this._indicator.menu.close();
    }

    Activate(labels) {
        return this._indicator.activateItem(labels);
    }

    // The message tray's banner and queue, and whether the start-up is complete, are private fields (the same from
    // GNOME 43 to 50): a test that waits for a banner must know whether the shell's own are still to come or in the way.
    Banners() {
        const tray = Main.messageTray;
        const text = notification => `${notification.title}: ${notification.bannerBodyText ?? notification.body ?? ''}`;
        return JSON.stringify({
            startingUp: Main.layoutManager._startingUp,
            shown: tray._notification ? text(tray._notification) : null,
            queued: (tray._notificationQueue ?? []).map(text),
        });
    }
}
