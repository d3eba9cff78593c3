"""Re-seal every stored CalDAV password bound to its row (user, ID, URL, username): resolver/sealing.py.

A value that no configured key opens is left as it is (it was unreadable
before; its owner must connect the account again, as the list command says).
"""
from django.db import migrations


def bind(apps, schema_editor):
    from resolver import sealing

    CalendarAccount = apps.get_model("resolver", "CalendarAccount")
    for row in CalendarAccount.objects.all().iterator():
        if row.password_sealed.startswith("v2$"):
            continue
        try:
            password = sealing.unseal_unbound(row.password_sealed)
        except sealing.Unsealable:
            continue
        context = sealing.account_context(row.user_id, row.pk, row.url, row.username)
        row.password_sealed = sealing.seal(password, context=context)
        row.save(update_fields=["password_sealed"])


def unbind(apps, schema_editor):
    from resolver import sealing

    CalendarAccount = apps.get_model("resolver", "CalendarAccount")
    for row in CalendarAccount.objects.all().iterator():
        context = sealing.account_context(row.user_id, row.pk, row.url, row.username)
        try:
            password = sealing.unseal(row.password_sealed, context=context)
        except sealing.Unsealable:
            continue
        row.password_sealed = sealing.seal_unbound(password)
        row.save(update_fields=["password_sealed"])


class Migration(migrations.Migration):

    dependencies = [
        ("resolver", "0003_calendar_account"),
    ]

    operations = [
        migrations.RunPython(bind, unbind),
    ]
