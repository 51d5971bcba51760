// hauld as the extension sees it: follows org.haul.Haul1 on the session bus and keeps a copy of its objects'
// properties, from GetManagedObjects, PropertiesChanged and the ObjectManager's signals.
//
// It never starts hauld: the name is watched without auto-start and every call carries NO_AUTO_START. It never
// blocks the shell: every call is asynchronous, with a timeout and a cancellable that leaving the bus (or
// destroy) cancels. A call that times out marks hauld as not responding (the menu greys) until an answer or a
// signal comes again; meanwhile it is asked again every few seconds.

import Gio from 'gi://Gio';
import GLib from 'gi://GLib';

import * as Contract from './contract.js';

const PROPERTIES_INTERFACE = 'org.freedesktop.DBus.Properties';
const OBJECT_MANAGER_INTERFACE = 'org.freedesktop.DBus.ObjectManager';
/** How long an answer may take before hauld counts as not responding. */
const CALL_TIMEOUT_MS = 4000;
/** How often a hauld that does not respond is asked again. */
const RETRY_SECONDS = 5;
/** Changes are handed on at most this often: progress comes up to ten times a second per task. */
const UPDATE_INTERVAL_MS = 100;

export class HaulClient {
    /** `onChange(state)` gets the state (see model.js) after each burst of changes. */
    constructor(onChange) {
        this._onChange = onChange;
        this._connection = Gio.DBus.session;
        this._owner = null;
        this._objects = new Map();
        this._responding = true;
        this._refreshing = false;
        this._subscriptions = [];
        this._cancellable = null;
        this._updateSource = 0;
        this._retrySource = 0;
        this._watch = Gio.bus_watch_name_on_connection(this._connection, Contract.BUS_NAME,
            Gio.BusNameWatcherFlags.NONE, (_connection, _name, owner) => this._appeared(owner),
            () => this._vanished());
    }

    destroy() {
        Gio.bus_unwatch_name(this._watch);
        this._forget();
        if (this._updateSource)
            GLib.source_remove(this._updateSource);
        this._updateSource = 0;
        this._onChange = null;
    }

    get state() {
        const manager = this._objects.get(Contract.MANAGER_PATH);
        const tasks = [];
        for (const [path, interfaces] of this._objects) {
            const task = interfaces.get(Contract.TASK_INTERFACE);
            if (task)
                tasks.push({...task, path});
        }
        return {
            onBus: this._owner !== null,
            responding: this._responding,
            indicator: manager?.get(Contract.INDICATOR_INTERFACE) ?? {},
            manager: manager?.get(Contract.MANAGER_INTERFACE) ?? {},
            tasks,
        };
    }

    /** Reads every object again; the menu asks when it opens, to see whether hauld answers. */
    refresh() {
        if (this._owner === null || this._refreshing)
            return;
        this._refreshing = true;
        const owner = this._owner;
        this._call(Contract.ROOT_PATH, OBJECT_MANAGER_INTERFACE, 'GetManagedObjects', null,
            new GLib.VariantType('(a{oa{sa{sv}}})'), reply => {
                if (owner !== this._owner)
                    return;
                this._objects = new Map();
                for (const [path, interfaces] of Object.entries(reply.recursiveUnpack()[0]))
                    this._objects.set(path, new Map(Object.entries(interfaces)));
                this._changed();
            }, () => {
                this._refreshing = false;
            });
    }

    callManager(method) {
        this._call(Contract.MANAGER_PATH, Contract.MANAGER_INTERFACE, method, null, null);
    }

    callTask(path, method) {
        this._call(path, Contract.TASK_INTERFACE, method, null, null);
    }

    setDownloadLimit(bytesPerSecond) {
        const value = new GLib.Variant('(ssv)', [Contract.MANAGER_INTERFACE, Contract.DOWNLOAD_LIMIT_PROPERTY,
            new GLib.Variant('t', bytesPerSecond)]);
        this._call(Contract.MANAGER_PATH, PROPERTIES_INTERFACE, 'Set', value, null);
    }

    _appeared(owner) {
        this._forget();
        this._owner = owner;
        this._cancellable = new Gio.Cancellable();
        const subscribe = (iface, member, path, handler) => this._subscriptions.push(
            this._connection.signal_subscribe(owner, iface, member, path, null, Gio.DBusSignalFlags.NONE,
                (_connection, _sender, objectPath, _iface, _member, parameters) =>
                    this._signal(() => handler(objectPath, parameters.recursiveUnpack()))));
        subscribe(PROPERTIES_INTERFACE, 'PropertiesChanged', null, (path, [iface, changed, invalidated]) => {
            const properties = this._objects.get(path)?.get(iface);
            if (!properties)
                return;
            Object.assign(properties, changed);
            for (const name of invalidated)
                delete properties[name];
        });
        subscribe(OBJECT_MANAGER_INTERFACE, 'InterfacesAdded', Contract.ROOT_PATH, (_, [path, interfaces]) => {
            const known = this._objects.get(path) ?? new Map();
            for (const [iface, properties] of Object.entries(interfaces))
                known.set(iface, properties);
            this._objects.set(path, known);
        });
        subscribe(OBJECT_MANAGER_INTERFACE, 'InterfacesRemoved', Contract.ROOT_PATH, (_, [path, interfaces]) => {
            const known = this._objects.get(path);
            for (const iface of interfaces)
                known?.delete(iface);
            if (known?.size === 0)
                this._objects.delete(path);
        });
        this._responding = true;
        this.refresh();
        this._changed();
    }

    _vanished() {
        this._forget();
        this._changed();
    }

    /** Drops what belongs to the owner that left: subscriptions, calls in flight, the objects. */
    _forget() {
        for (const id of this._subscriptions)
            this._connection.signal_unsubscribe(id);
        this._subscriptions = [];
        this._cancellable?.cancel();
        this._cancellable = null;
        this._owner = null;
        this._objects = new Map();
        this._refreshing = false;
        this._setResponding(true);
    }

    _signal(apply) {
        apply();
        this._setResponding(true);
        this._changed();
    }

    /** Calls hauld's current owner asynchronously; `onReply(reply)` on success, `onEnd()` in every case. */
    _call(path, iface, method, parameters, replyType, onReply = null, onEnd = null) {
        if (this._owner === null) {
            onEnd?.();
            return;
        }
        this._connection.call(this._owner, path, iface, method, parameters, replyType,
            Gio.DBusCallFlags.NO_AUTO_START, CALL_TIMEOUT_MS, this._cancellable, (connection, result) => {
                onEnd?.();
                let reply;
                try {
                    reply = connection.call_finish(result);
                } catch (error) {
                    if (error.matches(Gio.IOErrorEnum, Gio.IOErrorEnum.CANCELLED))
                        return;
                    if (error.matches(Gio.IOErrorEnum, Gio.IOErrorEnum.TIMED_OUT))
                        this._setResponding(false);
                    else
                        console.warn(`Haul: ${method} failed: ${error.message}`);
                    this._changed();
                    return;
                }
                this._setResponding(true);
                onReply?.(reply);
            });
    }

    _setResponding(responding) {
        if (responding === this._responding)
            return;
        this._responding = responding;
        if (this._retrySource)
            GLib.source_remove(this._retrySource);
        this._retrySource = 0;
        if (!responding) {
            this._retrySource = GLib.timeout_add_seconds(GLib.PRIORITY_DEFAULT, RETRY_SECONDS, () => {
                this.refresh();
                return GLib.SOURCE_CONTINUE;
            });
        }
        this._changed();
    }

    /** Hands the state on once the current burst of changes is over. */
    _changed() {
        if (this._updateSource || !this._onChange)
            return;
        this._updateSource = GLib.timeout_add(GLib.PRIORITY_DEFAULT, UPDATE_INTERVAL_MS, () => {
            this._updateSource = 0;
            this._onChange?.(this.state);
            return GLib.SOURCE_REMOVE;
        });
    }
}
