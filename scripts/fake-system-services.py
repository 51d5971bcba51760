#!/usr/bin/env python3
"""Fake NetworkManager, power-profiles-daemon and logind for Haul's tests (python3-dbus and python3-gi).

Plays the system services hauld reads on a private dbus-daemon that stands in for the system bus, each on a
connection of its own (so that each can leave and come back), and takes orders from the test through a control
object on one more connection. Prints one line `READY` to stdout once every service that starts present owns its
name. Runs until SIGTERM/SIGINT or until its parent process goes away.

    fake-system-services.py --address ADDRESS [--absent SERVICE]...

Services (the SERVICE keys of the control methods)
    NetworkManager  org.freedesktop.NetworkManager at /org/freedesktop/NetworkManager, interface
                    org.freedesktop.NetworkManager: properties Connectivity u (4), State u (70), Metered u (4).
    PowerProfiles   org.freedesktop.UPower.PowerProfiles at /org/freedesktop/UPower/PowerProfiles, interface
                    org.freedesktop.UPower.PowerProfiles: property ActiveProfile s ("balanced").
    hadess          The older name of the same: net.hadess.PowerProfiles at /net/hadess/PowerProfiles, interface
                    net.hadess.PowerProfiles. A service of its own here, so that either can be present alone.
    login1          org.freedesktop.login1 at /org/freedesktop/login1, interface org.freedesktop.login1.Manager:
                    Inhibit(s what, s who, s why, s mode) -> h, ListInhibitors() -> a(ssssuu), signal
                    PrepareForSleep(b), property PreparingForSleep b (the last PrepareForSleep's argument, false
                    at the start; no PropertiesChanged, as logind). Inhibit hands out the write end of a pipe and keeps the read end: the
                    inhibitor is released when every copy of the write end is closed (as logind's fifo).
    Properties are served through org.freedesktop.DBus.Properties (Get, GetAll; Set is refused) with whatever
    D-Bus type they hold, and PropertiesChanged is emitted for every change.

Control: org.haul.Test.FakeSystem at /org/haul/Test/FakeSystem, interface org.haul.Test.FakeSystem
    SetProperties(s service, a{sv} changed, as removed)  change and remove properties (any type: junk is fine),
                                                         then emit PropertiesChanged(changed, invalidated=removed)
    SetPresent(s service, b present)        leave the bus (release the name, close the connection) or come back
                                            (a new connection; properties as they were)
    SetReply(s service, s member, s how)    how the service answers calls of member (GetAll, Get, Inhibit):
                                            "normal", "slow" (normal, three seconds later), "error"
                                            (org.freedesktop.DBus.Error.Failed), "junk" (a string instead of the
                                            right type), "die" (leave the bus instead)
    EmitPrepareForSleep(v value)            login1 emits PrepareForSleep with the variant's value (a b, which
                                            PreparingForSleep takes, or junk)
    Inhibitors() -> a(ssssb)                every inhibitor handed out: what, who, why, mode, released
    Calls(s service, s member) -> u         how many calls of member (Get, GetAll, Inhibit) the service received
"""

import argparse
import collections
import os
import signal
import sys

import dbus
import dbus.bus
import dbus.lowlevel
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

CONTROL_NAME = "org.haul.Test.FakeSystem"
CONTROL_PATH = "/org/haul/Test/FakeSystem"
LOGIN_INTERFACE = "org.freedesktop.login1.Manager"
INHIBIT_WHAT = {"shutdown", "sleep", "idle", "handle-power-key", "handle-suspend-key", "handle-hibernate-key",
                "handle-lid-switch", "handle-reboot-key"}
INHIBIT_MODES = {"block", "block-weak", "delay"}
# How late a "slow" answer comes: long enough that a test can act while it is on its way even when dozens of tests
# share the two cores (half a second was not, once).
SLOW_MS = 3000


class Failed(dbus.DBusException):
    _dbus_error_name = "org.freedesktop.DBus.Error.Failed"


class InvalidArgs(dbus.DBusException):
    _dbus_error_name = "org.freedesktop.DBus.Error.InvalidArgs"


class PropertyReadOnly(dbus.DBusException):
    _dbus_error_name = "org.freedesktop.DBus.Error.PropertyReadOnly"


class Service:
    """One fake service: its name, its object and its properties, on a connection of its own while present."""

    def __init__(self, fakes, key, name, path, interface, properties):
        self.fakes = fakes
        self.key = key
        self.name = name
        self.path = path
        self.interface = interface
        self.properties = properties
        self.replies = {}  # member -> how
        self.calls = collections.Counter()  # member -> calls received
        self.connection = None
        self.exported = None

    @property
    def present(self):
        return self.connection is not None

    def appear(self):
        if self.present:
            return
        self.connection = dbus.bus.BusConnection(self.fakes.address)
        self.exported = self.make_object()
        # Last, as real services do: once the name is seen, the object answers.
        reply = self.connection.request_name(self.name, dbus.bus.NAME_FLAG_DO_NOT_QUEUE)
        if reply != dbus.bus.REQUEST_NAME_REPLY_PRIMARY_OWNER:
            raise RuntimeError(f"{self.name} is already owned")

    def leave(self):
        if not self.present:
            return
        connection, self.connection = self.connection, None
        # Releasing first: the bus has freed the name once it answers, so the service can come back at once.
        try:
            connection.release_name(self.name)
        except dbus.DBusException:
            pass
        self.exported.remove_from_connection()
        self.exported = None
        connection.close()

    def make_object(self):
        return PropertiesObject(self)

    def how(self, member):
        return self.replies.get(member, "normal")

    def answer(self, member, value, reply, error):
        """Replies to a call of member as told: the value (maybe late), an error, junk, or by leaving the bus."""
        how = self.how(member)
        if how == "slow":
            GLib.timeout_add(SLOW_MS, once(reply, value))
        elif how == "error":
            error(Failed(f"{member} fails as told"))
        elif how == "junk":
            reply(dbus.String("junk"))
        elif how == "die":
            # Leave from the main loop, after this handler has returned without answering.
            GLib.idle_add(once(self.leave))
        else:
            reply(value)

    def set_properties(self, changed, removed):
        for name in removed:
            self.properties.pop(str(name), None)
        for name, value in changed.items():
            self.properties[str(name)] = value
        if self.present:
            self.exported.PropertiesChanged(
                self.interface, dbus.Dictionary(changed, signature="sv"), dbus.Array(removed, signature="s"))


class PropertiesObject(dbus.service.Object):
    """org.freedesktop.DBus.Properties of a service's object, serving its properties with their own types."""

    def __init__(self, service):
        super().__init__(service.connection, service.path)
        self.service = service

    def check_interface(self, interface):
        if interface != self.service.interface:
            raise InvalidArgs(f"no interface {interface}")

    # Signatures left open (None): "junk" answers with another type than the declared one.
    @dbus.service.method(dbus.PROPERTIES_IFACE, in_signature="ss", out_signature=None,
                         async_callbacks=("reply", "error"))
    def Get(self, interface, name, reply, error):
        self.service.calls["Get"] += 1
        self.check_interface(interface)
        if name not in self.service.properties:
            raise InvalidArgs(f"no property {name}")
        value = self.service.properties[name]
        self.service.answer("Get", variant(value), lambda value: reply(value), error)

    @dbus.service.method(dbus.PROPERTIES_IFACE, in_signature="s", out_signature=None,
                         async_callbacks=("reply", "error"))
    def GetAll(self, interface, reply, error):
        self.service.calls["GetAll"] += 1
        self.check_interface(interface)
        everything = dbus.Dictionary(self.service.properties, signature="sv")
        self.service.answer("GetAll", everything, lambda value: reply(value), error)

    @dbus.service.method(dbus.PROPERTIES_IFACE, in_signature="ssv", out_signature="")
    def Set(self, interface, name, value):
        raise PropertyReadOnly(f"{name} is read-only")

    @dbus.service.signal(dbus.PROPERTIES_IFACE, signature="sa{sv}as")
    def PropertiesChanged(self, interface, changed, invalidated):
        pass


def once(function, *arguments):
    """A GLib source callback that calls function once."""
    def callback():
        try:
            function(*arguments)
        except dbus.DBusException:
            pass  # the caller or the service has left meanwhile
        return False
    return callback


def variant(value):
    """The value inside a variant: as the answer to Get (whose out_signature is open) it is marshalled as `v`."""
    return value if value.variant_level > 0 else with_variant_level(value, 1)


def bare(value):
    """A value received inside a variant, taken out of it (one level), to be sent with its own type."""
    return with_variant_level(value, max(value.variant_level - 1, 0))


def with_variant_level(value, level):
    if isinstance(value, (dbus.Array, dbus.Dictionary, dbus.Struct)):
        return type(value)(value, signature=value.signature, variant_level=level)
    return type(value)(value, variant_level=level)


class Inhibitor:
    def __init__(self, what, who, why, mode, read_end):
        self.what, self.who, self.why, self.mode = what, who, why, mode
        self.released = False
        self.read_end = read_end


class Login(Service):
    """logind's Manager: Inhibit hands out pipes, whose closing the fake watches; PrepareForSleep on demand."""

    def __init__(self, fakes):
        super().__init__(fakes, "login1", "org.freedesktop.login1", "/org/freedesktop/login1", LOGIN_INTERFACE,
                         {"PreparingForSleep": dbus.Boolean(False)})
        self.inhibitors = []

    def make_object(self):
        return LoginObject(self)

    def inhibit(self, what, who, why, mode, reply, error):
        self.calls["Inhibit"] += 1
        parts = str(what).split(":")
        if not parts or any(part not in INHIBIT_WHAT for part in parts) or mode not in INHIBIT_MODES:
            error(InvalidArgs(f"invalid inhibitor {what} {mode}"))
            return
        if mode == "delay" and any(part not in ("sleep", "shutdown") for part in parts):
            error(InvalidArgs("delay inhibitors only for sleep and shutdown"))
            return
        how = self.how("Inhibit")
        if how == "slow":
            GLib.timeout_add(SLOW_MS, once(self.hand_out, what, who, why, mode, reply))
        elif how != "normal":
            self.answer("Inhibit", None, reply, error)
        else:
            self.hand_out(what, who, why, mode, reply)

    def hand_out(self, what, who, why, mode, reply):
        read_end, write_end = os.pipe()
        inhibitor = Inhibitor(str(what), str(who), str(why), str(mode), read_end)
        self.inhibitors.append(inhibitor)
        GLib.unix_fd_add_full(GLib.PRIORITY_DEFAULT, read_end, GLib.IOCondition.HUP | GLib.IOCondition.ERR
                              | GLib.IOCondition.IN, self.closed, inhibitor)
        handed = dbus.types.UnixFd(write_end)  # a duplicate, closed when this object goes
        os.close(write_end)
        reply(handed)
        del handed

    def closed(self, fd, condition, inhibitor):
        # Nobody writes to the pipe: anything but end of file is ignored until the last writer has gone.
        if condition & GLib.IOCondition.IN and os.read(fd, 4096):
            return True
        inhibitor.released = True
        os.close(fd)
        return False

    def emit_prepare_for_sleep(self, value):
        if not self.present:
            raise Failed("login1 is not on the bus")
        value = bare(value)
        if isinstance(value, dbus.Boolean):
            self.properties["PreparingForSleep"] = value
        message = dbus.lowlevel.SignalMessage(self.path, LOGIN_INTERFACE, "PrepareForSleep")
        message.append(value)
        self.connection.send_message(message)


class LoginObject(PropertiesObject):
    @dbus.service.method(LOGIN_INTERFACE, in_signature="ssss", out_signature=None,
                         async_callbacks=("reply", "error"))
    def Inhibit(self, what, who, why, mode, reply, error):
        self.service.inhibit(what, who, why, mode, reply, error)

    @dbus.service.method(LOGIN_INTERFACE, in_signature="", out_signature="a(ssssuu)")
    def ListInhibitors(self):
        return dbus.Array([(i.what, i.who, i.why, i.mode, dbus.UInt32(0), dbus.UInt32(0))
                           for i in self.service.inhibitors if not i.released], signature="(ssssuu)")


class Control(dbus.service.Object):
    def __init__(self, fakes, connection):
        super().__init__(connection, CONTROL_PATH)
        self.fakes = fakes

    def service(self, key):
        try:
            return self.fakes.services[str(key)]
        except KeyError:
            raise InvalidArgs(f"no service {key}") from None

    @dbus.service.method(CONTROL_NAME, in_signature="sa{sv}as", out_signature="")
    def SetProperties(self, key, changed, removed):
        self.service(key).set_properties(changed, removed)

    @dbus.service.method(CONTROL_NAME, in_signature="sb", out_signature="")
    def SetPresent(self, key, present):
        service = self.service(key)
        if present:
            service.appear()
        else:
            service.leave()

    @dbus.service.method(CONTROL_NAME, in_signature="sss", out_signature="")
    def SetReply(self, key, member, how):
        if how not in ("normal", "slow", "error", "junk", "die"):
            raise InvalidArgs(f"no reply {how}")
        self.service(key).replies[str(member)] = str(how)

    @dbus.service.method(CONTROL_NAME, in_signature="v", out_signature="")
    def EmitPrepareForSleep(self, value):
        self.fakes.login.emit_prepare_for_sleep(value)

    @dbus.service.method(CONTROL_NAME, in_signature="", out_signature="a(ssssb)")
    def Inhibitors(self):
        return dbus.Array([(i.what, i.who, i.why, i.mode, dbus.Boolean(i.released))
                           for i in self.fakes.login.inhibitors], signature="(ssssb)")

    @dbus.service.method(CONTROL_NAME, in_signature="ss", out_signature="u")
    def Calls(self, key, member):
        return dbus.UInt32(self.service(key).calls[str(member)])


class Fakes:
    def __init__(self, address):
        self.address = address
        self.login = Login(self)
        network = Service(self, "NetworkManager", "org.freedesktop.NetworkManager", "/org/freedesktop/NetworkManager",
                          "org.freedesktop.NetworkManager",
                          {"Connectivity": dbus.UInt32(4), "State": dbus.UInt32(70), "Metered": dbus.UInt32(4)})
        profiles = Service(self, "PowerProfiles", "org.freedesktop.UPower.PowerProfiles",
                           "/org/freedesktop/UPower/PowerProfiles", "org.freedesktop.UPower.PowerProfiles",
                           {"ActiveProfile": dbus.String("balanced")})
        hadess = Service(self, "hadess", "net.hadess.PowerProfiles", "/net/hadess/PowerProfiles",
                         "net.hadess.PowerProfiles", {"ActiveProfile": dbus.String("balanced")})
        self.services = {service.key: service for service in (network, profiles, hadess, self.login)}


def main():
    parser = argparse.ArgumentParser(description="Fake system services for Haul's tests.")
    parser.add_argument("--address", required=True, help="the address of the bus that plays the system bus")
    parser.add_argument("--absent", action="append", default=[], help="a service that starts off the bus")
    arguments = parser.parse_args()

    DBusGMainLoop(set_as_default=True)
    loop = GLib.MainLoop()
    fakes = Fakes(arguments.address)
    unknown = set(arguments.absent) - set(fakes.services)
    if unknown:
        parser.error(f"no service {', '.join(sorted(unknown))}")
    control_connection = dbus.bus.BusConnection(arguments.address)
    control = Control(fakes, control_connection)
    for key, service in fakes.services.items():
        if key not in arguments.absent:
            service.appear()
    control_connection.request_name(CONTROL_NAME, dbus.bus.NAME_FLAG_DO_NOT_QUEUE)

    parent = os.getppid()

    def watch_parent():
        if os.getppid() != parent:
            loop.quit()  # the test process is gone
        return True

    GLib.timeout_add(250, watch_parent)
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, loop.quit)
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGINT, loop.quit)
    print("READY", flush=True)
    loop.run()
    del control
    sys.stdout.flush()


if __name__ == "__main__":
    main()
