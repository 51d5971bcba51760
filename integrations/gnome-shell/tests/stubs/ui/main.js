// Stands in for GNOME Shell's resource:///org/gnome/shell/ui/main.js in tests.js: a panel that records what is
// added to it.
export const panel = {
    statusArea: {},
    addToStatusArea(role, indicator) {
        if (this.statusArea[role])
            throw new Error(`${role} is in the status area already`);
        this.statusArea[role] = indicator;
        indicator.connect('destroy', () => delete this.statusArea[role]);
        return indicator;
    },
};
