from django.urls import path

from resolver.api import schema, views

urlpatterns = [
    path("schema/", schema.SchemaApi.as_view(), name="schema"),
    path("resolve", views.ResolveApi.as_view(), name="resolve"),
    path("collections", views.CollectionsApi.as_view(), name="collections"),
]
