from django.contrib import admin
from django.urls import include, path

from lifeproject import errors

urlpatterns = [
    path("admin/", admin.site.urls),
    path("v1/", include("resolver.urls")),
]

handler404 = errors.not_found
handler500 = errors.server_error
