from django.urls import path

from resolver.api import views

urlpatterns = [
    path("resolve", views.ResolveApi.as_view(), name="resolve"),
    path("collections", views.CollectionsApi.as_view(), name="collections"),
]
