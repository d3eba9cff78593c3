"""Calendar backends: `RESOLVER["CALENDAR_BACKEND"]` names a class with `from_settings(settings)`,
by default resolver.calendars.caldav.CalDAVCalendar (resolver.conf.build_backend builds it)."""
