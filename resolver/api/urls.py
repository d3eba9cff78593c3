from django.urls import path, re_path

from resolver.api import schema, views

urlpatterns = [
    path("schema/", schema.SchemaApi.as_view(), name="schema"),
    path("resolve", views.ResolveApi.as_view(), name="resolve"),
    path("collections", views.CollectionsApi.as_view(), name="collections"),
    # Last: every other path under the API prefix is a not_found envelope.
    re_path(r"^(?P<rest>.*)$", views.not_found, name="not_found"),
]
